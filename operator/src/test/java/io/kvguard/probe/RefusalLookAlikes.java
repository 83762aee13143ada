package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.verdict.PoolObservation;
import java.util.function.BiFunction;
import java.util.function.Predicate;

/**
 * What every engine's refusal recogniser must turn down alike: its own refusal body as a proxy or
 * gateway may pass it on (wrapped, doubled, rewritten, cut), and any answer it cannot measure
 * against the pod's limit.
 */
final class RefusalLookAlikes {
  private RefusalLookAlikes() {}

  /**
   * The refusal body inside HTML, twice over, with a key written twice, and cut at {@code cutAt}
   * characters is not the engine's refusal.
   *
   * @param answer the engine's refusal status with a content type and a body
   * @param duplicateKey {@code body} with one of its keys written twice
   */
  static void assertWrappedBodiesAreNotRefusals(
      Predicate<EngineResponse> refused,
      BiFunction<String, String, EngineResponse> answer,
      String body,
      String duplicateKey,
      int cutAt) {
    assertThat(refused.test(answer.apply("text/html", "<html><body>" + body + "</body></html>")))
        .as("inside HTML")
        .isFalse();
    assertThat(refused.test(answer.apply("application/json", body + body)))
        .as("two bodies")
        .isFalse();
    assertThat(refused.test(answer.apply("application/json", duplicateKey)))
        .as("a duplicate key")
        .isFalse();
    assertThat(refused.test(answer.apply("application/json", body.substring(0, cutAt))))
        .as("a cut body")
        .isFalse();
  }

  /**
   * Without the pod's limit ({@code unmeasured} reports none), the engine's own refusal is not
   * attributed and the fix names the missing figure.
   */
  static void assertNothingIsAttributedWithoutThePodsLimit(
      EngineRejection engine,
      EngineResponse refusal,
      OverLimitPrompt prompt,
      PoolObservation unmeasured,
      String missingFigure) {
    assertThat(engine.refusal(refusal, prompt, unmeasured)).isEmpty();
    assertThat(engine.fixFor(refusal, prompt, unmeasured).orElseThrow()).contains(missingFigure);
  }
}
