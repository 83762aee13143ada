package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.verdict.AdmissionPlan;
import io.kvguard.verdict.AnswerContent;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbePrompt;
import io.kvguard.verdict.RejectionOutcome;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * vLLM's refusal of an over-long prompt on {@code POST /v1/completions} (which accepts a prompt of
 * token IDs), matched whole: HTTP 400, a JSON body with exactly the fields vLLM's {@code
 * ErrorResponse} serialises (the flat {@code {"object": "error", "message", "type", "param",
 * "code"}} up to PR #22099, 2025-08-07, and {@code {"error": {"message", "type", "param", "code"}}}
 * since), type {@code BadRequestError} ({@code create_error_response}), code 400, and a message
 * that is one of the prompt-length sentences vLLM has written ({@link VllmLengthSentence}) with
 * numbers that are this probe's: the prompt kvguard sent, the one output token it asked for, and
 * the {@code max_model_len} the pod reported. OpenAI's own wording under another type, a gateway's
 * copy with other numbers or extra fields, or the sentence cut short proves nothing of vLLM's.
 */
final class VllmRejection implements EngineRejection {
  static final String COMPLETIONS = "/v1/completions";
  static final String ERROR_TYPE = "BadRequestError";

  /**
   * The refusal's class. A record of the earlier, substring-matched class ("BadRequestError:
   * maximum context length") is not carried over: that build recognised answers this one does not.
   */
  static final String ERROR_CLASS = ERROR_TYPE + ": maximum context length, whole message matched";

  /**
   * The class of V4's refusal of a prompt of exactly max_model_len tokens ({@link
   * VllmDecoderPromptSentence}).
   */
  static final String DECODER_PROMPT_CLASS =
      ERROR_TYPE + ": decoder prompt of max_model_len tokens, whole message matched";

  /** {@code max_tokens} of the V2 prompt's request. */
  static final long OUTPUT_TOKENS = 1;

  /** The paths as messages and records name them. */
  static final String V2 = "V2 renderer input-length check (N > max_model_len - max_tokens)";

  static final String V4 = "V4 engine prompt-length check (N = max_model_len)";

  private static final Set<String> FLAT_FIELDS =
      Set.of("object", "message", "type", "param", "code");
  private static final Set<String> ERROR_FIELDS = Set.of("message", "type", "param", "code");

  @Override
  public String engineName() {
    return "vLLM";
  }

  /**
   * The prompt goes in an OpenAI completions request, whose {@code model} field names the served
   * model.
   */
  @Override
  public Optional<String> modelNamedBy() {
    return Optional.of(COMPLETIONS);
  }

  /**
   * Two paths, read at jsboige/vllm main {@code ffd91ee17a} (docs/rejection-probe.md): V2, the
   * renderer's {@code N > max_model_len - T} ({@code vllm/renderers/params.py:436-462}), reached by
   * N = C + 1 with {@code max_tokens} 1; and V4, the engine input processor's {@code N ==
   * max_model_len} for generate models ({@code vllm/v1/engine/input_processor.py:402-447}), which
   * only a prompt of exactly C tokens with T = 0 at the renderer reaches. On {@code
   * /v1/completions} T is {@code max_tokens}, 16 when absent or null ({@code
   * completion/protocol.py:61,407-411}), so the V4 prompt sends {@code max_tokens} 0 with {@code
   * echo} true: the renderer then lets N = C through, {@code get_max_tokens} gives 0 ({@code
   * serve/utils/api_utils.py:170-206}), and echo without generation asks the engine for one token
   * ({@code completion/protocol.py:360,383}) instead of {@code SamplingParams} refusing 0 ({@code
   * sampling_params.py:592-596}). V1 counts characters of text (token IDs have none), V3 is a
   * backstop V2 leaves nothing to, V5 to V7 are start-up and scheduling.
   */
  @Override
  public AdmissionPlan paths(
      EngineHttp http,
      EngineEndpoint endpoint,
      long promptTokens,
      PoolObservation observation,
      Route route) {
    return AdmissionPlan.sizedBy(
        observation.engineContextTokens(),
        "the engine reports no max_model_len, so its admission paths cannot be sized",
        VllmRejection::pathsFor);
  }

  /** V2 and V4 for a context length of {@code c} tokens. */
  private static AdmissionPlan pathsFor(long c) {
    return new AdmissionPlan.Prompts(
        List.of(
            new ProbePrompt(
                V2,
                Math.addExact(c, 1),
                Set.of(ERROR_CLASS),
                "N = C + 1 = "
                    + c
                    + " + 1 with max_tokens 1: above the renderer's limit C - T whatever the"
                    + " tokenizer's cut-off"),
            new ProbePrompt(
                V4,
                c,
                Set.of(DECODER_PROMPT_CLASS),
                "N = C = "
                    + c
                    + " with max_tokens 0 and echo: the renderer admits it (N = C - 0), the engine's"
                    + " input processor refuses N == max_model_len")));
  }

  @Override
  public Plan plan(long promptTokens, String model, PoolObservation observation, Route route) {
    return new Plan.Send(request(model, promptTokens, ",\"max_tokens\":" + OUTPUT_TOKENS));
  }

  @Override
  public Plan plan(ProbePrompt prompt, String model, PoolObservation observation, Route route) {
    if (V4.equals(prompt.check())) {
      return new Plan.Send(request(model, prompt.tokens(), ",\"max_tokens\":0,\"echo\":true"));
    }
    return plan(prompt.tokens(), model, observation, route);
  }

  private static OverLimitPrompt request(String model, long tokens, String outputFields) {
    return OverLimitPrompt.tokenIds(
        COMPLETIONS,
        "{\"model\":" + OverLimitPrompt.quote(model) + ",\"prompt\":",
        tokens,
        outputFields + ",\"stream\":false}");
  }

  /**
   * vLLM's completion answers carry text; token IDs ({@code choices[].token_ids}, {@code
   * prompt_token_ids}, ffd91ee17a {@code vllm/entrypoints/openai/completion/protocol.py:615-617})
   * only when the request asks {@code return_token_ids}, which kvguard does not: the flag also
   * turns off the detokenization V4's prompt goes through, and builds before it have not been read.
   * Token IDs in an answer are scanned; text alone cannot be (which text a model makes of a
   * marker's IDs depends on its tokenizer).
   */
  @Override
  public AnswerContent answerContent(EngineResponse response) {
    return AnswerContents.ofJsonObject(
        response,
        engineName(),
        body -> {
          JsonNode choices = body.get("choices");
          List<long[]> lists = new java.util.ArrayList<>();
          if (choices != null && choices.isArray()) {
            for (JsonNode choice : choices) {
              AnswerContents.tokenIds(choice, "token_ids").ifPresent(lists::add);
              AnswerContents.tokenIds(choice, "prompt_token_ids").ifPresent(lists::add);
            }
          }
          return lists.isEmpty()
              ? new AnswerContent.Unreadable(
                  "vLLM's answer carries text and no token IDs unless asked for return_token_ids,"
                      + " which kvguard does not ask")
              : new AnswerContent.TokenIds(lists);
        });
  }

  @Override
  public Optional<String> refusal(
      EngineResponse response, OverLimitPrompt sent, PoolObservation observation) {
    return judge(response, sent, observation).errorClass();
  }

  @Override
  public boolean recognises(int status, String errorClass, PoolObservation observation) {
    // Only a per-path record with both paths: kvguard before issue 26 sent one prompt above the
    // limit, which never reached V4.
    return RejectionOutcome.Refused.perPathRecord(
        status,
        errorClass,
        400,
        Set.of(ERROR_CLASS, DECODER_PROMPT_CLASS),
        Set.of(ERROR_CLASS, DECODER_PROMPT_CLASS));
  }

  @Override
  public String refusalShape() {
    return "vLLM's length refusal (HTTP 400, a JSON error of type "
        + ERROR_TYPE
        + " and code 400 whose message is vLLM's whole \"maximum context length\" sentence"
        + " with the prompt sent and the pod's max_model_len, or for a prompt of exactly"
        + " max_model_len tokens its whole \"decoder prompt … plus the number of requested output"
        + " tokens\" sentence)";
  }

  /** For a JSON answer: what in it is not vLLM's refusal of this probe. */
  @Override
  public Optional<String> fixFor(
      EngineResponse response, OverLimitPrompt prompt, PoolObservation observation) {
    if (ErrorBodies.strictObject(response).isEmpty()) {
      return Optional.empty();
    }
    return judge(response, prompt, observation)
        .notVllms()
        .map(
            seen ->
                "the JSON answer is not vLLM's: "
                    + seen
                    + ". Something other than the engine answered (a gateway that counts tokens"
                    + " itself, another engine behind the port) or a vLLM build whose refusal"
                    + " kvguard has not read: point the role's port at the engine itself and check"
                    + " which component answered in its logs");
  }

  /** vLLM's check that refused, or why the answer is not vLLM's refusal of the prompt sent. */
  private record Judgement(Optional<String> errorClass, Optional<String> notVllms) {
    static Judgement not(String why) {
      return new Judgement(Optional.empty(), Optional.of(why));
    }

    static Judgement from(Optional<String> why, String errorClass) {
      return why.isPresent() ? not(why.get()) : new Judgement(Optional.of(errorClass), why);
    }
  }

  private static Judgement judge(
      EngineResponse response, OverLimitPrompt sent, PoolObservation observation) {
    Optional<JsonNode> error = errorObject(response);
    if (error.isEmpty()) {
      return Judgement.not(notVllms(response).orElseThrow());
    }
    Optional<String> message = ErrorBodies.text(error.get(), "message");
    OptionalLong context = observation.engineContextTokens();
    if (message.filter(VllmDecoderPromptSentence::is).isPresent()) {
      if (error.get().has("object")) {
        // The flat envelope ended with PR #22099 (2025-08), before the sentence (2025-11).
        return Judgement.not(
            "it has the flat envelope of vLLM before PR #22099, which never wrote"
                + " that sentence");
      }
      if (!error.get().get("param").isNull()) {
        return Judgement.not("its param is not null, as vLLM sends with that sentence");
      }
      if (context.isEmpty()) {
        return Judgement.not(
            "the pod reported no max_model_len, so the sentence's numbers cannot be checked");
      }
      return Judgement.from(
          VllmDecoderPromptSentence.mismatch(message.get(), sent.tokens(), context.getAsLong()),
          DECODER_PROMPT_CLASS);
    }
    return Judgement.from(lengthSentence(error.get(), message, sent, observation), ERROR_CLASS);
  }

  /** The error object of vLLM's envelope, when everything but the message is vLLM's. */
  private static Optional<JsonNode> errorObject(EngineResponse response) {
    return notVllms(response).isEmpty()
        ? ErrorBodies.strictObject(response)
            .map(body -> body.has("error") ? body.get("error") : body)
        : Optional.empty();
  }

  /**
   * Why the envelope is not vLLM's ErrorResponse of a 400, in words that quote no part of the body;
   * empty when it is.
   */
  private static Optional<String> notVllms(EngineResponse response) {
    Optional<JsonNode> body = ErrorBodies.strictObject(response);
    if (body.isEmpty()) {
      return Optional.of("the body is not one complete JSON object");
    }
    JsonNode error;
    if (ErrorBodies.hasExactly(body.get(), FLAT_FIELDS)) {
      if (!"error".equals(ErrorBodies.text(body.get(), "object").orElse(null))) {
        return Optional.of("its object field is not \"error\"");
      }
      error = body.get();
    } else if (ErrorBodies.hasExactly(body.get(), Set.of("error"))
        && ErrorBodies.child(body.get(), "error")
            .filter(e -> ErrorBodies.hasExactly(e, ERROR_FIELDS))
            .isPresent()) {
      error = body.get().get("error");
    } else {
      return Optional.of(
          "its fields are not those vLLM's ErrorResponse has (error.message, error.type, error.param,"
              + " error.code, or object, message, type, param, code before PR #22099)");
    }
    if (!ERROR_TYPE.equals(ErrorBodies.text(error, "type").orElse(null))) {
      return Optional.of("its type is not " + ERROR_TYPE);
    }
    JsonNode code = error.get("code");
    if (!code.isIntegralNumber() || !code.canConvertToInt() || code.intValue() != 400) {
      return Optional.of("its code is not the number 400");
    }
    if (response.status() != 400) {
      return Optional.of(
          "it came with HTTP " + response.status() + ", and vLLM sends its code, 400");
    }
    JsonNode param = error.get("param");
    if (!param.isNull() && !param.isTextual()) {
      return Optional.of("its param is neither null nor a string");
    }
    return Optional.empty();
  }

  /**
   * Why the message is not one of V2's sentences with this probe's numbers, in words that quote no
   * part of the body but numbers the sentence states; empty when it is.
   */
  private static Optional<String> lengthSentence(
      JsonNode error, Optional<String> message, OverLimitPrompt sent, PoolObservation observation) {
    JsonNode param = error.get("param");
    Optional<VllmLengthSentence> form = message.flatMap(VllmLengthSentence::of);
    if (form.isEmpty()) {
      return Optional.of("its message is not one of vLLM's prompt-length sentences, whole");
    }
    if (!form.get().param().allows(param.isNull() ? null : param.asText())) {
      return Optional.of("its param is not the one vLLM sends with that sentence");
    }
    OptionalLong context = observation.engineContextTokens();
    if (context.isEmpty()) {
      return Optional.of(
          "the pod reported no max_model_len, so the sentence's numbers cannot be checked");
    }
    return form.get()
        .mismatch(message.get(), sent.tokens(), outputTokens(sent), context.getAsLong());
  }

  /** The {@code max_tokens} the request asked for: 0 for V4's prompt, 1 otherwise. */
  private static long outputTokens(OverLimitPrompt sent) {
    return sent.suffix().startsWith("],\"max_tokens\":0,") ? 0 : OUTPUT_TOKENS;
  }
}
