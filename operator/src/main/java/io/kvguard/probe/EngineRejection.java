package io.kvguard.probe;

import io.kvguard.verdict.AdmissionPlan;
import io.kvguard.verdict.AnswerContent;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbePrompt;
import java.util.List;
import java.util.Optional;

/**
 * What one engine does with a prompt longer than it admits, as read in that engine's own source:
 * the request that reaches its admission check, and the refusal that check answers. Each engine
 * with a rejection probe has one ({@link EngineProbe#rejection()}); kvguard recognises no other
 * refusal.
 */
public interface EngineRejection {

  /** Where the prompt travels. */
  enum Route {
    /** Straight to one engine process (the operator's probe of a pod). */
    POD,
    /**
     * Through a prefill/decode router that adds the disaggregation fields itself ({@code check
     * --pd-router}).
     */
    PD_ROUTER
  }

  /** What to send to this process, or why nothing sent from here can prove anything. */
  sealed interface Plan {
    record Send(OverLimitPrompt prompt) implements Plan {}

    /** {@code reason} is safe to show and names what to change. */
    record Skip(String reason) implements Plan {}
  }

  /** The engine's name as messages show it. */
  String engineName();

  /**
   * Whether a prompt can be sent this way: to the process itself always; through a router only
   * where its fields are known.
   */
  default boolean takes(Route route) {
    return route == Route.POD;
  }

  /**
   * The path whose request must name the served model, for engines whose API needs it; empty
   * otherwise.
   */
  default Optional<String> modelNamedBy() {
    return Optional.empty();
  }

  /**
   * The prompts to send, one per admission path an over-long prompt can take in this engine, each
   * with the refusal of its own check (issue 26). Every engine with a rejection probe overrides
   * this (SGLang, vLLM, TGI, llama.cpp); the default, one prompt just above the admission limit
   * refused by any refusal the engine recognises, is for an engine whose paths kvguard has not
   * read. May read the engine (SGLang's limits are in its /server_info).
   *
   * @param promptTokens the length just above the engine's admission limit (kvguard's single
   *     prompt)
   */
  default AdmissionPlan paths(
      EngineHttp http,
      EngineEndpoint endpoint,
      long promptTokens,
      PoolObservation observation,
      Route route)
      throws ProbeException {
    return new AdmissionPlan.Prompts(List.of(ProbePrompt.anyRefusal(promptTokens)));
  }

  /**
   * @param promptTokens the prompt's length, as {@link #paths} sized it
   * @param model the served model's name, for engines whose API needs it
   * @param observation what the engine's pool probe saw (its mode and context length decide some
   *     plans)
   */
  Plan plan(long promptTokens, String model, PoolObservation observation, Route route);

  /**
   * As {@link #plan(long, String, PoolObservation, Route)}, for the prompt of one admission path:
   * engines whose paths need different requests (vLLM's V4 asks for no output token at the
   * renderer) override this.
   */
  default Plan plan(ProbePrompt prompt, String model, PoolObservation observation, Route route) {
    return plan(prompt.tokens(), model, observation, route);
  }

  /**
   * The engine's own admission refusal, recognised by status and its whole error shape, with
   * numbers that are this probe's (the prompt sent, the figures the pod reported); its error class
   * in kvguard's words (never the engine's payload). Empty for every other answer.
   */
  Optional<String> refusal(
      EngineResponse response, OverLimitPrompt sent, PoolObservation observation);

  /**
   * Whether a refusal recorded earlier (on the pod, before an operator restart) is one this
   * recogniser gives today: a record from a kvguard build that recognised more, or that sent fewer
   * prompts than the pod's figures now call for, must not stand in for a refusal.
   *
   * @param observation what the engine reports now (from a fresh pool probe, or the figures carried
   *     over from the record until one comes)
   */
  boolean recognises(int status, String errorClass, PoolObservation observation);

  /**
   * The limit the engine's refusal states (SGLang's scheduler sentence: its max_req_input_len),
   * parsed as digits; empty when the answer states none.
   */
  default Optional<Long> statedLimit(EngineResponse response) {
    return Optional.empty();
  }

  /** The refusal's shape, as messages describe what was expected instead. */
  String refusalShape();

  /**
   * For a 4xx that is not the engine's refusal of this probe: a fix specific to this engine (e.g.
   * TGI's body limit), or what in the answer did not match the pod's own figures (never quoting the
   * body); empty if none.
   */
  Optional<String> fixFor(
      EngineResponse response, OverLimitPrompt prompt, PoolObservation observation);

  /**
   * What an answer (2xx) to the over-long prompt is known to mean for this engine; "" when nothing
   * more.
   */
  default String answerMeaning() {
    return "";
  }

  /**
   * What of an answer (2xx or 5xx, not streamed) can carry probe markers (issue 26 §4), in the form
   * this engine's answer has them: token IDs where it returns them, text for an engine sent text.
   * Read once, in memory; the caller drops the answer after the scan. Unreadable, with why, where
   * the answer carries neither.
   */
  default AnswerContent answerContent(EngineResponse response) {
    return new AnswerContent.Unreadable(
        "kvguard has not read where " + engineName() + "'s answer carries tokens");
  }
}
