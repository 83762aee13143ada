package io.kvguard.demo;

import io.kvguard.demo.FakeEngine.Answer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/** The answers real engines give (shapes from docs/engines.md), with the numbers a scenario needs. */
public final class EngineShapes {
  private EngineShapes() {}

  /**
   * SGLang 0.5.x {@code /server_info} with one internal_states entry per rank, plus {@code /v1/models}.
   * It includes the api_key SGLang dumps with its arguments, so tests can prove it never leaks.
   */
  public static Map<String, Answer> sglang(long engineContext, String mode, String version, long... rankPools) {
    String ranks = LongStream.of(rankPools).mapToObj(pool ->
        "{\"memory_usage\":{\"weight\":88.1,\"kvcache\":41.3,\"token_capacity\":" + pool + ",\"graph\":1.2},"
            + "\"last_gen_throughput\":0.0,\"effective_max_running_requests_per_dp\":64}")
        .collect(Collectors.joining(","));
    String info = "{\"model_path\":\"zai-org/GLM-5.3\",\"context_length\":" + engineContext
        + ",\"disaggregation_mode\":\"" + (mode == null ? "null" : mode) + "\",\"dp_size\":" + rankPools.length
        + ",\"tp_size\":8,\"page_size\":64,\"api_key\":\"" + SECRET_API_KEY + "\",\"admin_api_key\":\""
        + SECRET_API_KEY + "-admin\",\"max_total_num_tokens\":" + rankPools[0]
        + ",\"max_req_input_len\":" + (Math.min(engineContext, rankPools[0]) - 6)
        + ",\"status\":\"ready\",\"version\":\"" + version + "\",\"internal_states\":[" + ranks + "]}";
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put("/server_info", Answer.json(info));
    answers.put("/v1/models", models(engineContext));
    answers.put("/health", Answer.json("{}"));
    return answers;
  }

  /** An older SGLang that only answers {@code /get_server_info} and reports no per-rank capacity. */
  public static Map<String, Answer> sglangLegacy(long engineContext, long rankZeroPool, String version) {
    String info = "{\"model_path\":\"zai-org/GLM-5.3\",\"context_length\":" + engineContext
        + ",\"disaggregation_mode\":\"null\",\"dp_size\":1,\"api_key\":\"" + SECRET_API_KEY + "\",\"max_total_num_tokens\":"
        + rankZeroPool + ",\"version\":\"" + version + "\",\"internal_states\":[{\"last_gen_throughput\":0.0}]}";
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put("/get_server_info", Answer.json(info));
    answers.put("/v1/models", models(engineContext));
    return answers;
  }

  /**
   * vLLM {@code /metrics} with one cache_config_info series per data-parallel engine. A null
   * {@code kvCacheSizeTokens} leaves the label out, as builds before it did.
   */
  public static Map<String, Answer> vllm(long maxModelLen, long numGpuBlocks, long blockSize, Long... kvCacheSizeTokens) {
    StringBuilder metrics = new StringBuilder()
        .append("# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n")
        .append("# TYPE vllm:cache_config_info gauge\n");
    int engines = Math.max(1, kvCacheSizeTokens.length);
    for (int engine = 0; engine < engines; engine++) {
      Long sized = kvCacheSizeTokens.length == 0 ? null : kvCacheSizeTokens[engine];
      metrics.append("vllm:cache_config_info{block_size=\"").append(blockSize)
          .append("\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",engine=\"").append(engine)
          .append("\",gpu_memory_utilization=\"0.9\"");
      if (sized != null) {
        metrics.append(",kv_cache_size_tokens=\"").append(sized).append('"');
      }
      metrics.append(",num_gpu_blocks=\"").append(numGpuBlocks).append("\",num_gpu_blocks_override=\"None\"} 1.0\n");
    }
    metrics.append("# HELP vllm:num_requests_running Number of requests in model execution batches.\n")
        .append("# TYPE vllm:num_requests_running gauge\n")
        .append("vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 0.0\n");
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put("/metrics", Answer.prometheus(metrics.toString()));
    answers.put("/v1/models", models(maxModelLen));
    answers.put("/version", Answer.json("{\"version\":\"0.11.0\"}"));
    return answers;
  }

  public static Answer models(long maxModelLen) {
    return Answer.json("{\"object\":\"list\",\"data\":[{\"id\":\"zai-org/GLM-5.3\",\"object\":\"model\","
        + "\"owned_by\":\"sglang\",\"root\":\"zai-org/GLM-5.3\",\"max_model_len\":" + maxModelLen + "}]}");
  }

  /** What a healthy engine answers to an over-long prompt (SGLang's validate_input_length wording). */
  public static Answer refusesOverLong(long promptTokens, long limit) {
    return new Answer(400, "application/json", ("{\"object\":\"error\",\"message\":\"Input length (" + promptTokens
        + " tokens) exceeds the maximum allowed length (" + limit + " tokens). Use a shorter input or enable"
        + " --allow-auto-truncate.\",\"type\":\"BadRequestError\",\"code\":400}").getBytes(java.nio.charset.StandardCharsets.UTF_8), 0);
  }

  /** The incident's engine: an over-long prompt answered with HTTP 200 and somebody else's text. */
  public static Answer answersOverLong(String leakedText) {
    return Answer.json("{\"text\":\"" + leakedText + "\",\"meta_info\":{\"prompt_tokens\":1,\"completion_tokens\":1,"
        + "\"finish_reason\":{\"type\":\"length\",\"length\":1}}}");
  }

  /** The secret fake engines embed where real SGLang does; nothing kvguard writes may contain it. */
  public static final String SECRET_API_KEY = "sk-kvguard-test-secret-4f1c9e";
}
