package io.kvguard.testkit;

import io.kvguard.testkit.FakeEngine.Answer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/**
 * The answers real engines give (shapes from docs/engines.md), with the numbers a scenario needs.
 */
public final class EngineShapes {
  private EngineShapes() {}

  /**
   * SGLang 0.5.x {@code /server_info} with one internal_states entry per rank, plus {@code
   * /v1/models}. It includes the api_key SGLang dumps with its arguments, so tests can prove it
   * never leaks.
   */
  public static Map<String, Answer> sglang(
      long engineContext, String mode, String version, long... rankPools) {
    String ranks =
        LongStream.of(rankPools)
            .mapToObj(
                pool ->
                    "{\"memory_usage\":{\"weight\":88.1,\"kvcache\":41.3,\"token_capacity\":"
                        + pool
                        + ",\"graph\":1.2},"
                        + "\"last_gen_throughput\":0.0,\"effective_max_running_requests_per_dp\":64}")
            .collect(Collectors.joining(","));
    String info =
        "{\"model_path\":\"zai-org/GLM-5.3\",\"context_length\":"
            + engineContext
            + ",\"disaggregation_mode\":\""
            + (mode == null ? "null" : mode)
            // Every server argument is dumped, the bootstrap server's port too (v0.5.18
            // server_args.py:3114-3118, default 8998).
            + "\",\"disaggregation_bootstrap_port\":8998,\"dp_size\":"
            + rankPools.length
            + ",\"tp_size\":8,\"dcp_size\":1,\"page_size\":64,\"api_key\":\""
            + SECRET_API_KEY
            + "\",\"admin_api_key\":\""
            + SECRET_API_KEY
            + "-admin\",\"max_total_num_tokens\":"
            + rankPools[0]
            + ",\"max_req_input_len\":"
            + (Math.min(engineContext, rankPools[0]) - 6)
            + ",\"allow_auto_truncate\":false,\"speculative_algorithm\":null"
            + ",\"status\":\"ready\",\"version\":\""
            + version
            + "\",\"internal_states\":["
            + ranks
            + "]}";
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put("/server_info", Answer.json(info));
    answers.put("/v1/models", models(engineContext));
    answers.put("/health", Answer.json("{}"));
    return answers;
  }

  /**
   * An older SGLang that only answers {@code /get_server_info} and reports no per-rank capacity.
   */
  public static Map<String, Answer> sglangLegacy(
      long engineContext, long rankZeroPool, String version) {
    String info =
        "{\"model_path\":\"zai-org/GLM-5.3\",\"context_length\":"
            + engineContext
            + ",\"disaggregation_mode\":\"null\",\"dp_size\":1,\"api_key\":\""
            + SECRET_API_KEY
            + "\",\"max_total_num_tokens\":"
            + rankZeroPool
            + ",\"version\":\""
            + version
            + "\",\"internal_states\":[{\"last_gen_throughput\":0.0}]}";
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put("/get_server_info", Answer.json(info));
    answers.put("/v1/models", models(engineContext));
    return answers;
  }

  /**
   * vLLM {@code /metrics} with one cache_config_info series per data-parallel engine. A null {@code
   * kvCacheSizeTokens} leaves the label out, as builds before it did.
   */
  public static Map<String, Answer> vllm(
      long maxModelLen, long numGpuBlocks, long blockSize, Long... kvCacheSizeTokens) {
    StringBuilder metrics =
        new StringBuilder()
            .append("# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n")
            .append("# TYPE vllm:cache_config_info gauge\n");
    int engines = Math.max(1, kvCacheSizeTokens.length);
    for (int engine = 0; engine < engines; engine++) {
      Long sized = kvCacheSizeTokens.length == 0 ? null : kvCacheSizeTokens[engine];
      metrics
          .append("vllm:cache_config_info{block_size=\"")
          .append(blockSize)
          .append("\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",engine=\"")
          .append(engine)
          .append("\",gpu_memory_utilization=\"0.9\"");
      if (sized != null) {
        metrics.append(",kv_cache_size_tokens=\"").append(sized).append('"');
      }
      metrics
          .append(",num_gpu_blocks=\"")
          .append(numGpuBlocks)
          .append("\",num_gpu_blocks_override=\"None\"} 1.0\n");
    }
    metrics
        .append("# HELP vllm:num_requests_running Number of requests in model execution batches.\n")
        .append("# TYPE vllm:num_requests_running gauge\n")
        .append("vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 0.0\n");
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put("/metrics", Answer.prometheus(metrics.toString()));
    answers.put("/v1/models", models(maxModelLen));
    answers.put("/version", Answer.json("{\"version\":\"0.11.0\"}"));
    return answers;
  }

  /** TGI 2.2 and older: {@code /info} carries the pool as max_batch_total_tokens. */
  public static Map<String, Answer> tgi22(
      long maxTotalTokens, long maxBatchTotalTokens, String version) {
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put(
        "/info",
        Answer.json(
            "{\"model_id\":\"meta-llama/Llama-3.1-8B-Instruct\",\"model_sha\":\"0e9e39f2\","
                + "\"model_dtype\":\"torch.float16\",\"model_device_type\":\"cuda\",\"model_pipeline_tag\":\"text-generation\","
                + "\"max_concurrent_requests\":128,\"max_best_of\":2,\"max_stop_sequences\":4,\"max_input_tokens\":"
                + (maxTotalTokens - 1)
                + ",\"max_total_tokens\":"
                + maxTotalTokens
                + ",\"waiting_served_ratio\":0.3,"
                + "\"max_batch_total_tokens\":"
                + maxBatchTotalTokens
                + ",\"max_waiting_tokens\":20,\"max_batch_size\":null,"
                + "\"validation_workers\":2,\"max_client_batch_size\":4,\"router\":\"text-generation-router\","
                + "\"version\":\""
                + version
                + "\",\"sha\":\"6d7e3d6\",\"docker_label\":\"sha-6d7e3d6\"}"));
    answers.put("/health", Answer.json("{}"));
    return answers;
  }

  /**
   * TGI 2.3.1 and later (3.x): no pool in {@code /info}; the tgi_batch_max_total_tokens gauge on
   * /metrics.
   */
  public static Map<String, Answer> tgi3(
      long maxTotalTokens, long batchMaxTotalTokens, String version) {
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put(
        "/info",
        Answer.json(
            "{\"model_id\":\"meta-llama/Llama-3.1-8B-Instruct\",\"model_sha\":\"0e9e39f2\","
                + "\"model_pipeline_tag\":\"text-generation\",\"max_concurrent_requests\":128,\"max_best_of\":2,"
                + "\"max_stop_sequences\":4,\"max_input_tokens\":"
                + (maxTotalTokens - 1)
                + ",\"max_total_tokens\":"
                + maxTotalTokens
                + ",\"validation_workers\":2,\"max_client_batch_size\":4,"
                + "\"router\":\"text-generation-router\",\"version\":\""
                + version
                + "\",\"sha\":\"b70f29d\","
                + "\"docker_label\":\"sha-b70f29d\"}"));
    answers.put(
        "/metrics",
        Answer.prometheus(
            "# HELP tgi_queue_size Current queue size\n# TYPE tgi_queue_size gauge\n"
                + "tgi_queue_size 0\n# HELP tgi_batch_current_size Current batch size\n# TYPE tgi_batch_current_size gauge\n"
                + "tgi_batch_current_size 0\n# HELP tgi_batch_max_total_tokens Maximum amount of tokens in total.\n"
                + "# TYPE tgi_batch_max_total_tokens gauge\ntgi_batch_max_total_tokens "
                + batchMaxTotalTokens
                + "\n"
                + "# TYPE tgi_request_count counter\ntgi_request_count{method=\"POST\"} 3\n"));
    answers.put("/health", Answer.json("{}"));
    return answers;
  }

  /** Triton's TensorRT-LLM backend metrics: pool = max blocks × tokens per block. */
  public static Map<String, Answer> tritonTrtllm(long maxBlocks, long tokensPerBlock) {
    String series =
        "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"%s\",model=\"tensorrt_llm\",version=\"1\"} %s\n";
    String metrics =
        "# HELP nv_trt_llm_kv_cache_block_metrics TRT LLM KV cache block metrics\n"
            + "# TYPE nv_trt_llm_kv_cache_block_metrics gauge\n"
            + String.format(series, "fraction", "0.000160")
            + String.format(series, "tokens_per", tokensPerBlock)
            + String.format(series, "used", 1)
            + String.format(series, "free", maxBlocks - 1)
            + String.format(series, "max", maxBlocks)
            + "# TYPE nv_inference_request_success counter\n"
            + "nv_inference_request_success{model=\"tensorrt_llm\",version=\"1\"} 12\n";
    return Map.of("/metrics", Answer.prometheus(metrics));
  }

  /** trtllm-serve's Prometheus gauges (names as seen in third-party configs). */
  public static Map<String, Answer> trtllmServe(long maxBlocks, long tokensPerBlock) {
    String labels = "{engine_type=\"trtllm\",model_name=\"Qwen/Qwen3-8B\"}";
    return Map.of(
        "/metrics",
        Answer.prometheus(
            "# TYPE trtllm_kv_cache_max_blocks gauge\n"
                + "trtllm_kv_cache_max_blocks"
                + labels
                + " "
                + maxBlocks
                + "\n"
                + "# TYPE trtllm_kv_cache_tokens_per_block gauge\n"
                + "trtllm_kv_cache_tokens_per_block"
                + labels
                + " "
                + tokensPerBlock
                + "\n"
                + "# TYPE trtllm_request_success_total counter\ntrtllm_request_success_total"
                + labels
                + " 4\n"));
  }

  /** trtllm-serve's JSON {@code /metrics}: iteration stats with kvCacheStats. */
  public static Map<String, Answer> trtllmServeIterationStats(long maxBlocks, long tokensPerBlock) {
    return Map.of(
        "/metrics",
        Answer.json(
            "[{\"cpuMemUsage\":1843200,\"gpuMemUsage\":71303168000,\"iter\":41,"
                + "\"iterLatencyMS\":12.4,\"kvCacheStats\":{\"allocNewBlocks\":0,\"allocTotalBlocks\":12,\"cacheHitRate\":0.0,"
                + "\"freeNumBlocks\":"
                + (maxBlocks - 12)
                + ",\"maxNumBlocks\":"
                + maxBlocks
                + ",\"missedBlocks\":0,"
                + "\"reusedBlocks\":0,\"tokensPerBlock\":"
                + tokensPerBlock
                + ",\"usedNumBlocks\":12},\"numActiveRequests\":0,"
                + "\"timestamp\":\"10-12-2026 09:14:03\"}]"));
  }

  /** llama.cpp server {@code /props} of 2025 builds: per-slot n_ctx, total_slots and build_info. */
  public static Map<String, Answer> llamacpp(long slotContext, int slots, String buildInfo) {
    return Map.of(
        "/props",
        Answer.json(
            "{\"default_generation_settings\":{\"id\":0,\"id_task\":-1,\"n_ctx\":"
                + slotContext
                + ",\"speculative\":false,\"is_processing\":false,\"params\":{\"n_predict\":-1,"
                + "\"seed\":4294967295,\"temperature\":0.8,\"top_k\":40,\"top_p\":0.95},\"prompt\":\"\","
                + "\"next_token\":{\"has_next_token\":true,\"n_remain\":-1,\"n_decoded\":0}},\"total_slots\":"
                + slots
                + ",\"model_path\":\"/models/Qwen3-8B-Q4_K_M.gguf\",\"modalities\":{\"vision\":false,\"audio\":false},"
                + "\"chat_template\":\"{%- for message in messages %}{{ message.content }}{%- endfor %}\","
                + "\"bos_token\":\"<|endoftext|>\",\"eos_token\":\"<|im_end|>\",\"build_info\":\""
                + buildInfo
                + "\"}"));
  }

  /** llama.cpp server {@code /props} of 2024 builds: no build_info, settings flattened. */
  public static Map<String, Answer> llamacppLegacy(long slotContext, int slots) {
    return Map.of(
        "/props",
        Answer.json(
            "{\"system_prompt\":\"\",\"default_generation_settings\":{\"n_ctx\":"
                + slotContext
                + ",\"n_predict\":-1,\"model\":\"/models/llama-2-7b.Q4_K_M.gguf\",\"seed\":4294967295,"
                + "\"temperature\":0.8,\"top_k\":40,\"top_p\":0.95,\"stream\":false},\"total_slots\":"
                + slots
                + ",\"chat_template\":\"\"}"));
  }

  /**
   * Ollama 0.9.7 and later: {@code /api/ps} with one context_length per loaded model, and
   * /api/version.
   */
  public static Map<String, Answer> ollama(String version, long... contextLengths) {
    String models =
        LongStream.of(contextLengths)
            .mapToObj(
                length ->
                    "{\"name\":\"qwen3:8b\",\"model\":\"qwen3:8b\",\"size\":6223001600,\"digest\":\"500a1f06\","
                        + "\"details\":{\"parent_model\":\"\",\"format\":\"gguf\",\"family\":\"qwen3\",\"families\":[\"qwen3\"],"
                        + "\"parameter_size\":\"8.2B\",\"quantization_level\":\"Q4_K_M\"},"
                        + "\"expires_at\":\"2318-08-15T10:12:44.5+00:00\",\"size_vram\":6223001600,\"context_length\":"
                        + length
                        + "}")
            .collect(Collectors.joining(","));
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put("/api/ps", Answer.json("{\"models\":[" + models + "]}"));
    answers.put("/api/version", Answer.json("{\"version\":\"" + version + "\"}"));
    return answers;
  }

  /** Ollama before 0.9.7: {@code /api/ps} has no context_length. */
  public static Map<String, Answer> ollamaLegacy(String version) {
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put(
        "/api/ps",
        Answer.json(
            "{\"models\":[{\"name\":\"llama3:8b\",\"model\":\"llama3:8b\","
                + "\"size\":5137025024,\"digest\":\"365c0bd3\",\"details\":{\"format\":\"gguf\",\"family\":\"llama\"},"
                + "\"expires_at\":\"2025-03-01T10:00:00Z\",\"size_vram\":5137025024}]}"));
    answers.put("/api/version", Answer.json("{\"version\":\"" + version + "\"}"));
    return answers;
  }

  public static Answer models(long maxModelLen) {
    return Answer.json(
        "{\"object\":\"list\",\"data\":[{\"id\":\"zai-org/GLM-5.3\",\"object\":\"model\","
            + "\"owned_by\":\"sglang\",\"root\":\"zai-org/GLM-5.3\",\"max_model_len\":"
            + maxModelLen
            + "}]}");
  }

  /**
   * What a healthy SGLang answers on {@code /generate} to a prompt at or above its context length:
   * its tokenizer's refusal, HTTP 400 {@code {"error": {"message": …}}} (sgl-project/sglang 0.5.6
   * {@code tokenizer_manager.py} {@code _validate_one_request}, {@code http_server.py} {@code
   * _create_error_response}).
   */
  public static Answer refusesOverLong(long promptTokens, long contextLength) {
    return new Answer(
        400,
        "application/json",
        ("{\"error\":{\"message\":\"The input ("
                + promptTokens
                + " tokens) is longer than the model's context length ("
                + contextLength
                + " tokens).\"}}")
            .getBytes(java.nio.charset.StandardCharsets.UTF_8),
        0);
  }

  /** The incident's engine: an over-long prompt answered with HTTP 200 and somebody else's text. */
  public static Answer answersOverLong(String leakedText) {
    return Answer.json(
        "{\"text\":\""
            + leakedText
            + "\",\"meta_info\":{\"prompt_tokens\":1,\"completion_tokens\":1,"
            + "\"finish_reason\":{\"type\":\"length\",\"length\":1}}}");
  }

  /**
   * SGLang v0.5.18's native {@code /generate} (non-streaming) as its two length checks answer, by
   * the prompt's length N in token IDs: N ≥ C is refused by the tokenizer (S1: {@code
   * tokenizer_manager.py:1196-1219}, {@code http_server.py:932-939,2071-2075}); M ≤ N &lt; C gets
   * {@code band} (the real engine's is {@link #refusesBand}: the scheduler's S4, {@code
   * managers/utils.py:193-223}, re-raised at {@code tokenizer_manager.py:1700-1707}); shorter
   * prompts are served. Sources: operator/src/test/resources/engines/sglang-0.5.18/SOURCE.md.
   */
  public static java.util.function.Function<byte[], Answer> sglangGenerate(
      long contextLength, long maxReqInputLen, java.util.function.LongFunction<Answer> band) {
    return body -> {
      long n = tokenIds(body);
      if (n >= contextLength) {
        return refusesOverLong(n, contextLength);
      }
      if (n >= maxReqInputLen) {
        return band.apply(n);
      }
      return answersOverLong("ok");
    };
  }

  /** SGLang v0.5.18's scheduler refusal (S4) of an N-token prompt with limit M, HTTP 400. */
  public static Answer refusesBand(long promptTokens, long maxReqInputLen) {
    return new Answer(
        400,
        "application/json",
        ("{\"error\":{\"message\":\"Input length ("
                + promptTokens
                + " tokens) exceeds the maximum allowed length ("
                + maxReqInputLen
                + " tokens). Use a shorter input or enable --allow-auto-truncate.\"}}")
            .getBytes(java.nio.charset.StandardCharsets.UTF_8),
        0);
  }

  /**
   * vLLM at jsboige/vllm main ffd91ee17a on {@code POST /v1/completions}, by the prompt's length N
   * in token IDs and its {@code max_tokens} T (16 when absent): N &gt; C − T is refused by the
   * renderer (V2, {@code vllm/renderers/params.py:436-462}); N = C with T = 0 and echo reaches the
   * engine's input processor (V4, {@code vllm/v1/engine/input_processor.py:438-447}), whose answer
   * is {@code atContext} (the real engine's is {@link #vllmRefusesAtContext}); shorter prompts are
   * served.
   */
  public static java.util.function.Function<byte[], Answer> vllmCompletions(
      long maxModelLen, java.util.function.LongFunction<Answer> atContext) {
    return body -> {
      String text = new String(body, java.nio.charset.StandardCharsets.UTF_8);
      long n = tokenIdsIn(body, "prompt");
      java.util.regex.Matcher asked =
          java.util.regex.Pattern.compile("\"max_tokens\":([0-9]+)").matcher(text);
      long t = asked.find() ? Long.parseLong(asked.group(1)) : 16;
      long maxInput = maxModelLen - t;
      if (n > maxInput) {
        String atLeast = n == maxInput + 1 ? "at least " : "";
        return json(
            400,
            "{\"error\":{\"message\":\"This model's maximum context length is "
                + maxModelLen
                + " tokens. However, you requested "
                + t
                + " output tokens and your prompt contains "
                + atLeast
                + n
                + " input tokens, for a total of "
                + atLeast
                + (n + t)
                + " tokens. Please reduce the length of the input prompt or the number of requested"
                + " output tokens. (parameter=input_tokens, value="
                + n
                + ")\",\"type\":\"BadRequestError\",\"param\":\"input_tokens\",\"code\":400}}");
      }
      if (n == maxModelLen) {
        return atContext.apply(n);
      }
      return answersOverLong("ok");
    };
  }

  /** vLLM's V4 refusal of a prompt of exactly max_model_len tokens (ffd91ee17a), HTTP 400. */
  public static Answer vllmRefusesAtContext(long promptTokens) {
    return json(
        400,
        "{\"error\":{\"message\":\"The decoder prompt (length "
            + promptTokens
            + ") plus the number of requested output tokens (at least 1) is longer than the maximum"
            + " model length of "
            + promptTokens
            + ". Make sure that `max_model_len` is no smaller than the number of text tokens (prompt"
            + " + requested output tokens).\",\"type\":\"BadRequestError\",\"param\":null,"
            + "\"code\":400}}");
  }

  /**
   * TGI v3.3.7's {@code POST /generate}, {@code validate_input} ({@code
   * router/src/validation.rs:145-187}): a tokenizer that adds a BOS token to one token per " a"
   * unit gives N' = units + 1; with {@code max_new_tokens} 1, N' + 1 &gt; X is refused by T2; I
   * &lt; N' otherwise gets {@code input} (the real engine's is {@link #tgiRefusesInputLength});
   * shorter prompts are served.
   */
  public static java.util.function.Function<byte[], Answer> tgiGenerate(
      long maxTotalTokens, long maxInputTokens, java.util.function.LongFunction<Answer> input) {
    return body -> {
      String text = new String(body, java.nio.charset.StandardCharsets.UTF_8);
      // One unit per space: the filler " a" and the probe's marker words (" b" … " z").
      long units = words(body).length;
      long counted = units + 1;
      if (counted + 1 > maxTotalTokens) {
        return json(
            422,
            "{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must be <= "
                + maxTotalTokens
                + ". Given: "
                + counted
                + " `inputs` tokens and 1 `max_new_tokens`\",\"error_type\":\"validation\"}");
      }
      if (counted > maxInputTokens) {
        return input.apply(counted);
      }
      return answersOverLong("ok");
    };
  }

  /** TGI's T3 refusal of a prompt TGI counted as {@code counted} tokens, HTTP 422. */
  public static Answer tgiRefusesInputLength(long counted, long maxInputTokens) {
    return json(
        422,
        "{\"error\":\"Input validation error: `inputs` must have less than "
            + maxInputTokens
            + " tokens. Given: "
            + counted
            + "\",\"error_type\":\"validation\"}");
  }

  /**
   * llama-server at d14ce3dab on {@code POST /completion}: N ≥ S gets {@code atContext} when N = S
   * and the L1 refusal above ({@code tools/server/server-context.cpp:2500-2507}); the real server's
   * answer to N = S is that refusal too ({@link #llamaRefusesContext}, recorded in
   * llamacpp-d14ce3d/completion-np1-at-context-400.http); shorter prompts are served.
   */
  public static java.util.function.Function<byte[], Answer> llamaCompletion(
      long slotContext, java.util.function.LongFunction<Answer> atContext) {
    return body -> {
      long n = tokenIdsIn(body, "prompt");
      if (n == slotContext) {
        return atContext.apply(n);
      }
      if (n > slotContext) {
        return llamaRefusesContext(n, slotContext);
      }
      return answersOverLong("ok");
    };
  }

  /** llama-server's L1 refusal (d14ce3dab), HTTP 400. */
  public static Answer llamaRefusesContext(long promptTokens, long slotContext) {
    return json(
        400,
        "{\"error\":{\"code\":400,\"message\":\"request ("
            + promptTokens
            + " tokens) exceeds the available context size ("
            + slotContext
            + " tokens), try increasing it\",\"type\":\"exceed_context_size_error\","
            + "\"n_prompt_tokens\":"
            + promptTokens
            + ",\"n_ctx\":"
            + slotContext
            + "}}");
  }

  private static Answer json(int status, String body) {
    return new Answer(
        status, "application/json", body.getBytes(java.nio.charset.StandardCharsets.UTF_8), 0);
  }

  /** The number of token IDs in a body's {@code "input_ids":[…]}; 0 without one. */
  static long tokenIds(byte[] body) {
    return tokenIdsIn(body, "input_ids");
  }

  /** The number of token IDs in a body's {@code "<key>":[…]}; 0 without one. */
  public static long tokenIdsIn(byte[] body, String key) {
    String text = new String(body, java.nio.charset.StandardCharsets.UTF_8);
    int open = text.indexOf("\"" + key + "\":[");
    if (open < 0) {
      return 0;
    }
    int start = open + ("\"" + key + "\":[").length();
    int end = text.indexOf(']', start);
    if (end == start) {
      return 0;
    }
    long commas = 0;
    for (int i = start; i < end; i++) {
      if (text.charAt(i) == ',') {
        commas++;
      }
    }
    return commas + 1;
  }

  /**
   * The first {@code count} token IDs of a body's {@code "<key>":[…]}: where kvguard's probe prompt
   * carries its marker (issue 26 §4), for a fake engine that leaks it into another answer.
   */
  public static long[] leadTokenIds(byte[] body, String key, int count) {
    String text = new String(body, java.nio.charset.StandardCharsets.UTF_8);
    int start = text.indexOf("\"" + key + "\":[") + ("\"" + key + "\":[").length();
    String[] ids = text.substring(start, text.indexOf(']', start)).split(",", count + 1);
    long[] lead = new long[Math.min(count, ids.length)];
    for (int i = 0; i < lead.length; i++) {
      lead[i] = Long.parseLong(ids[i]);
    }
    return lead;
  }

  /** The words of TGI's {@code inputs} (each unit is a space and a word). */
  public static String[] words(byte[] body) {
    String text = new String(body, java.nio.charset.StandardCharsets.UTF_8);
    int start = text.indexOf("\"inputs\":\"") + "\"inputs\":\"".length();
    String inputs = text.substring(start, text.indexOf('"', start)).strip();
    return inputs.isEmpty() ? new String[0] : inputs.split(" ");
  }

  /**
   * SGLang's answer to a served {@code /generate} request (v0.5.18 {@code
   * tokenizer_manager.py:2382-2391}): its text, the generated token IDs and meta_info.
   */
  public static Answer sglangAnswers(String text, long... outputIds) {
    return json(
        200,
        "{\"text\":\""
            + text
            + "\",\"output_ids\":"
            + java.util.Arrays.toString(outputIds).replace(" ", "")
            + ",\"meta_info\":{\"prompt_tokens\":1,\"completion_tokens\":"
            + outputIds.length
            + ",\"finish_reason\":{\"type\":\"length\",\"length\":"
            + outputIds.length
            + "}}}");
  }

  /**
   * llama-server's answer on {@code /completion} with {@code return_tokens} (d14ce3dab {@code
   * tools/server/server-task.cpp:747-751}, abridged).
   */
  public static Answer llamaAnswers(String content, long... tokens) {
    return json(
        200,
        "{\"index\":0,\"content\":\""
            + content
            + "\",\"tokens\":"
            + java.util.Arrays.toString(tokens).replace(" ", "")
            + ",\"id_slot\":0,\"stop\":true,\"tokens_predicted\":"
            + tokens.length
            + ",\"truncated\":false}");
  }

  /** TGI's answer on {@code /generate} (v3.3.7 {@code router/src/lib.rs:1474-1479}). */
  public static Answer tgiAnswers(String generatedText) {
    return json(200, "{\"generated_text\":\"" + generatedText + "\"}");
  }

  /**
   * The secret fake engines embed where real SGLang does; nothing kvguard writes may contain it.
   */
  public static final String SECRET_API_KEY = "sk-kvguard-test-secret-4f1c9e";
}
