package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.verdict.AdmissionPlan;
import io.kvguard.verdict.AnswerContent;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbePrompt;
import io.kvguard.verdict.RejectionOutcome;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * TGI's refusal of an over-long prompt on {@code POST /generate}, read in
 * huggingface/text-generation-inference at v1.0.0 through v3.3.7, matched whole: HTTP 422 and
 * exactly {@code {"error": "Input validation error: …", "error_type": "validation"}} ({@code
 * ErrorResponse} in {@code router/src/lib.rs}, answered by {@code impl From<InferError> for
 * (StatusCode, Json<ErrorResponse>)}, {@code router/src/server.rs:2404-2426} at v3.3.7), whose
 * error is one of the router's two length sentences ({@link TgiLengthSentence}) with numbers that
 * are this probe's: the limit is the {@code max_total_tokens} the pod's {@code /info} reported, the
 * {@code max_new_tokens} is the 1 kvguard asked for, and the prompt count fits the text kvguard
 * sent.
 *
 * <p>TGI takes text only, and since 2.4.1 its router caps request bodies ({@code --payload-limit},
 * default 2,000,000 bytes, {@code DefaultBodyLimit} in {@code router/src/server.rs}): axum answers
 * a larger body with HTTP 413 "length limit exceeded" before TGI's validation runs, which proves
 * nothing about it.
 */
final class TgiRejection implements EngineRejection {
  static final String GENERATE = "/generate";
  static final String ERROR_TYPE = "validation";

  /** {@code max_new_tokens} of the probe's request. */
  static final long OUTPUT_TOKENS = 1;

  /**
   * The refusal's classes, one per check. A record of the earlier, prefix-matched class
   * ("validation") is not carried over: that build recognised answers this one does not.
   */
  static final String MAX_TOTAL_TOKENS_CLASS =
      ERROR_TYPE + ": MaxTotalTokens, whole answer matched";

  static final String INPUT_LENGTH_CLASS = ERROR_TYPE + ": InputLength, whole answer matched";

  private static final Set<String> FIELDS = Set.of("error", "error_type");
  private static final String UNIT = " a";
  private static final String BEFORE = "{\"inputs\":\"";
  private static final String AFTER =
      "\",\"parameters\":{\"max_new_tokens\":" + OUTPUT_TOKENS + "}}";

  /** The paths as messages and records name them. */
  static final String T2 = "T2 total check (N + max_new_tokens > max_total_tokens)";

  static final String T3 = "T3 input check (N > max_input_tokens)";

  @Override
  public String engineName() {
    return "TGI";
  }

  /**
   * TGI's two length checks in {@code validate_input} ({@code router/src/validation.rs:145-187} at
   * v3.3.7), each with {@code max_new_tokens} 1: T2, reached by N = X + 1 units (X = {@code
   * max_total_tokens}); and T3, checked after T2, reached only by I &lt; N' ≤ X − 1 (I = {@code
   * max_input_tokens}), so by N = I + 1 units where TGI's count of them (its own tokenizer: each "
   * a" at least one token, plus up to {@link TgiLengthSentence#SPECIAL_TOKENS_ALLOWED} special
   * tokens) may exceed X − 1 where the band is narrow: that answer is T2's refusal, inconclusive.
   * Where the band is empty (TGI's default, I = X − 1, for a request that asks for a token), no
   * prompt asking for output reaches T3, and T2 alone is sent. T1 needs {@code truncate}, T4 is
   * streaming, T5 start-up, T6 a queue wait.
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
        "/info reports no max_total_tokens, so TGI's length checks cannot be sized",
        x ->
            AdmissionPlan.sizedBy(
                observation.engineInputTokens(),
                "/info reports no max_input_tokens (TGI 2.0 and later report it), so the input"
                    + " check (T3) cannot be sized and its refusal's limit cannot be checked; run"
                    + " TGI 2.0 or later",
                i -> pathsFor(x, i)));
  }

  /** T2, and T3 where its band holds a prompt, for X = max_total_tokens, I = max_input_tokens. */
  private static AdmissionPlan pathsFor(long x, long i) {
    List<ProbePrompt> prompts = new ArrayList<>();
    prompts.add(
        new ProbePrompt(
            T2,
            Math.addExact(x, 1),
            Set.of(MAX_TOTAL_TOKENS_CLASS),
            "N = X + 1 = "
                + x
                + " + 1 units with max_new_tokens 1: at least X + 1 tokens, over the total"));
    long t3 = Math.addExact(i, 1);
    // Sent wherever the band holds a prompt, even where the tokenizer's special tokens may push
    // I + 1 units past it: T2's refusal of this prompt is then another check's (inconclusive, the
    // gate stays shut), whereas not sending it would open the gate with T3 unproven.
    if (t3Band(i, x)) {
      prompts.add(
          new ProbePrompt(
              T3,
              t3,
              Set.of(INPUT_LENGTH_CLASS),
              "N = I + 1 = "
                  + i
                  + " + 1 units with max_new_tokens 1: over the input limit, and with TGI's special"
                  + " tokens still within the total, so T2 lets it through"));
    }
    return new AdmissionPlan.Prompts(prompts);
  }

  @Override
  public Plan plan(long promptTokens, String model, PoolObservation observation, Route route) {
    // One " a" per token: at least one token each with every common tokenizer.
    return new Plan.Send(OverLimitPrompt.text(GENERATE, BEFORE, UNIT, promptTokens, AFTER));
  }

  /**
   * TGI answers text only: {@code generated_text} of {@code GenerateResponse} (v3.3.7 {@code
   * router/src/lib.rs:1474-1479}), scanned for a marker's words.
   */
  @Override
  public AnswerContent answerContent(EngineResponse response) {
    return AnswerContents.ofJsonObject(
        response,
        engineName(),
        body ->
            ErrorBodies.text(body, "generated_text")
                .<AnswerContent>map(AnswerContent.Text::new)
                .orElseGet(
                    () ->
                        new AnswerContent.Unreadable(
                            "the answer has no generated_text, which TGI's /generate answers carry")));
  }

  @Override
  public Optional<String> refusal(
      EngineResponse response, OverLimitPrompt sent, PoolObservation observation) {
    return judge(response, sent, observation).form().map(TgiRejection::errorClass);
  }

  @Override
  public boolean recognises(int status, String errorClass, PoolObservation observation) {
    // Only a per-path record: kvguard before issue 26 sent one prompt, which never reached T3 and
    // whose InputLength refusal was not checked against /info max_input_tokens. And T3 must be in
    // it wherever the pod's figures give T3 a band today: builds before the second review of issue
    // 26 sent T2 alone when X - I was 2 to 9, and such a record proves nothing about T3. Figures
    // carried over from the record hold no max_input_tokens; the pod's next pool probe, a period
    // later, brings them and decides.
    boolean t3Owed =
        observation.engineContextTokens().isPresent()
            && observation.engineInputTokens().isPresent()
            && t3Band(
                observation.engineInputTokens().getAsLong(),
                observation.engineContextTokens().getAsLong());
    return RejectionOutcome.Refused.perPathRecord(
        status,
        errorClass,
        422,
        Set.of(MAX_TOTAL_TOKENS_CLASS, INPUT_LENGTH_CLASS),
        t3Owed
            ? Set.of(MAX_TOTAL_TOKENS_CLASS, INPUT_LENGTH_CLASS)
            : Set.of(MAX_TOTAL_TOKENS_CLASS));
  }

  /** Whether T3 has a band a prompt asking for one token can land in: I + 1 + 1 <= X. */
  private static boolean t3Band(long maxInputTokens, long maxTotalTokens) {
    return maxInputTokens < Long.MAX_VALUE - OUTPUT_TOKENS
        && maxInputTokens + 1 + OUTPUT_TOKENS <= maxTotalTokens;
  }

  @Override
  public String refusalShape() {
    return "TGI's length refusal (HTTP 422, exactly {\"error\", \"error_type\": \"validation\"} whose"
        + " error is TGI's whole \"Input validation error: `inputs` tokens + `max_new_tokens` must be"
        + " <= N\" or \"`inputs` must have less than N tokens\" sentence with the prompt sent, the"
        + " max_new_tokens asked for and the pod's max_total_tokens)";
  }

  @Override
  public Optional<String> fixFor(
      EngineResponse response, OverLimitPrompt prompt, PoolObservation observation) {
    if (response.status() == 413) {
      // Only numbers kvguard saw: the size of what it sent. The limit in force is not visible
      // from outside.
      return Optional.of(
          "TGI 2.4.1 and later refuse request bodies above --payload-limit before validating them,"
              + " and this request is "
              + prompt.contentLength()
              + " bytes: raise the engine's --payload-limit above "
              + prompt.contentLength()
              + " bytes");
    }
    if (ErrorBodies.strictObject(response).isEmpty()) {
      return Optional.empty();
    }
    return judge(response, prompt, observation)
        .notTgis()
        .map(
            seen ->
                "the JSON answer is not TGI's refusal of this prompt: "
                    + seen
                    + ". Something other than the engine answered (a gateway that counts tokens"
                    + " itself, another engine behind the port) or a TGI build whose refusal"
                    + " kvguard has not read: point the role's port at the TGI router itself and"
                    + " check which component answered in its log");
  }

  private static String errorClass(TgiLengthSentence form) {
    return form == TgiLengthSentence.MAX_TOTAL_TOKENS ? MAX_TOTAL_TOKENS_CLASS : INPUT_LENGTH_CLASS;
  }

  /** TGI's check that refused, or why the answer is not TGI's refusal of the prompt sent. */
  private record Judgement(Optional<TgiLengthSentence> form, Optional<String> notTgis) {
    static Judgement not(String why) {
      return new Judgement(Optional.empty(), Optional.of(why));
    }
  }

  /** In words that quote no part of the body but numbers the sentence states. */
  private static Judgement judge(
      EngineResponse response, OverLimitPrompt sent, PoolObservation observation) {
    Optional<JsonNode> body = ErrorBodies.strictObject(response);
    if (body.isEmpty()) {
      return Judgement.not("the body is not one complete JSON object");
    }
    if (!ErrorBodies.hasExactly(body.get(), FIELDS)) {
      return Judgement.not("its fields are not those TGI's ErrorResponse has (error, error_type)");
    }
    if (!ERROR_TYPE.equals(ErrorBodies.text(body.get(), "error_type").orElse(null))) {
      return Judgement.not("its error_type is not " + ERROR_TYPE);
    }
    if (response.status() != 422) {
      return Judgement.not(
          "it came with HTTP "
              + response.status()
              + ", and TGI answers validation errors with 422");
    }
    Optional<String> error = ErrorBodies.text(body.get(), "error");
    Optional<TgiLengthSentence> form = error.flatMap(TgiLengthSentence::of);
    if (form.isEmpty()) {
      return Judgement.not("its error is not one of TGI's length sentences, whole");
    }
    OptionalLong total = observation.engineContextTokens();
    if (total.isEmpty()) {
      return Judgement.not(
          "the pod reported no max_total_tokens, so the sentence's numbers cannot be checked");
    }
    // InputLength's limit is held to /info max_input_tokens, to what TGI enforces at start-up
    // (below max_total_tokens) and to the count it refused.
    long textBytes =
        sent.contentLength()
            - BEFORE.getBytes(StandardCharsets.UTF_8).length
            - AFTER.getBytes(StandardCharsets.UTF_8).length;
    Optional<String> mismatch =
        form.get()
            .mismatch(
                error.get(),
                sent.tokens(),
                textBytes,
                OUTPUT_TOKENS,
                total.getAsLong(),
                observation.engineInputTokens());
    return mismatch.isPresent()
        ? Judgement.not(mismatch.get())
        : new Judgement(form, Optional.empty());
  }
}
