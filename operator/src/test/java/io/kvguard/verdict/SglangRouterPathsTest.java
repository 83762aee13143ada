package io.kvguard.verdict;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The prompts sent through a prefill/decode router, from every worker's own /server_info: S1 at C −
 * R, and a band prompt at the largest prefill max_req_input_len, which lands in every prefill
 * worker's band whichever the router picks. Figures: the incident's prefill (C 1,048,576, pool
 * 681,280, M 681,274 at 0.5.18) and its pool after the fix (2,040,000, M 1,048,570).
 */
class SglangRouterPathsTest {
  private static final long C = 1_048_576;

  private static SglangAdmission seen(String version, long context, long m, long pool) {
    return new SglangAdmission(
        context,
        version,
        OptionalLong.of(m),
        Optional.of(false),
        null,
        Optional.empty(),
        OptionalLong.empty(),
        OptionalLong.empty(),
        OptionalLong.empty(),
        OptionalLong.of(1),
        OptionalLong.of(pool));
  }

  private static SglangRouterPaths.Worker worker(String pod, String role, SglangAdmission a) {
    return new SglangRouterPaths.Worker(pod, role, a);
  }

  private static List<Long> lengths(AdmissionPlan plan) {
    assertThat(plan).isInstanceOf(AdmissionPlan.Prompts.class);
    return ((AdmissionPlan.Prompts) plan).prompts().stream().map(ProbePrompt::tokens).toList();
  }

  /**
   * Two prefill pools and one decode pool, M per the 0.5.18 formula min(C − 1, P − 1) − 5: the band
   * prompt is the largest prefill M, sent once per prefill pod; decode's M does not size it.
   */
  @ParameterizedTest(name = "prefill pools {0} and {1}, decode {2}: S4 at {3}")
  @CsvSource({
    // The fixed pool on both prefill pods: M = C − 6.
    "2040000, 2040000, 2040000, 1048570, 1048570",
    // A prefill pool just above the context: M 1,048,567; the band prompt is the other's M, and
    // decode (M_D 1,048,567) refuses what either prefill pod lets through.
    "2040000, 1048573, 1048573, 1048570, 1048567",
    // Both prefill pools above the context, decode's at the incident's size: decode refuses every
    // band prompt itself (M_D 681,274 is at most every prefill M), so its pairs have no band.
    "2040000, 1048573, 681280, 1048570, 1048567",
    // The incident's pool on prefill, decode's above the context: the band [681,274, 1,048,569]
    // that answered 200 in the incident, reached at its first length.
    "681280, 681280, 2040000, 681274, 681274",
  })
  void theBandPromptLandsInEveryPrefillWorkersBand(
      long pool1, long pool2, long decodePool, long band, long otherM) {
    List<SglangRouterPaths.Worker> workers = new ArrayList<>();
    for (long pool : List.of(pool1, pool2)) {
      long m = SglangAdmission.formula("0.5.18", C, pool, 1).getAsLong();
      workers.add(worker("prefill-" + workers.size(), "prefill", seen("0.5.18", C, m, pool)));
    }
    long decodeM = SglangAdmission.formula("0.5.18", C, decodePool, 1).getAsLong();
    workers.add(worker("decode-0", "decode", seen("0.5.18", C, decodeM, decodePool)));

    AdmissionPlan plan = SglangRouterPaths.plan(workers);

    assertThat(lengths(plan)).containsExactly(C, band, band);
    List<ProbePrompt> prompts = ((AdmissionPlan.Prompts) plan).prompts();
    assertThat(prompts.get(0).refusals()).containsExactly(SglangAdmission.CONTEXT_CHECK);
    assertThat(prompts.get(1).refusals()).containsExactly(SglangAdmission.SCHEDULER_CHECK);
    assertThat(prompts.get(1).check()).endsWith("through the router (1 of 2)");
    assertThat(prompts.get(2).check()).endsWith("through the router (2 of 2)");
    // Every prefill pod's M is at most the band prompt, and the band prompt below C − R.
    assertThat(otherM).isLessThanOrEqualTo(band);
    assertThat(band).isLessThan(C);
  }

  /**
   * The router answers with the decode worker's response, and decode refuses N ≥ M_D itself: the
   * incident's prefill (M 681,274) beside a fixed one (M 1,048,570) exposes [681,274, M_D − 1] with
   * a decode of M_D 1,048,570, which the band prompt (1,048,570, the largest prefill M) cannot
   * reach.
   */
  @Test
  void aDecodePodRefusingTheBandPromptItselfLeavesAnotherPairsBandUnprovable() {
    AdmissionPlan plan =
        SglangRouterPaths.plan(
            List.of(
                worker("prefill-0", "prefill", seen("0.5.18", C, 681_274, 681_280)),
                worker("prefill-1", "prefill", seen("0.5.18", C, 1_048_570, 2_040_000)),
                worker("decode-0", "decode", seen("0.5.18", C, 1_048_570, 2_040_000))));

    assertThat(plan)
        .isInstanceOfSatisfying(
            AdmissionPlan.Unprovable.class,
            u ->
                assertThat(u.reason())
                    .startsWith("decode pod decode-0 refuses prompts from 1048570 tokens")
                    .contains("lets through prompts from 681274"));
  }

  @Test
  void theBandPromptIsSentOncePerPrefillPodUpToEight() {
    List<SglangRouterPaths.Worker> workers = new ArrayList<>();
    for (int i = 0; i < 11; i++) {
      workers.add(worker("prefill-" + i, "prefill", seen("0.5.18", C, 1_048_570, 2_040_000)));
    }

    assertThat(lengths(SglangRouterPaths.plan(workers)))
        .hasSize(1 + SglangRouterPaths.MAX_BAND_PROMPTS)
        .startsWith(C)
        .endsWith(1_048_570L);
  }

  @Test
  void workersWithDifferentContextLengthsCannotBeProvenThroughOneRouter() {
    AdmissionPlan plan =
        SglangRouterPaths.plan(
            List.of(
                worker("prefill-0", "prefill", seen("0.5.18", C, 1_048_570, 2_040_000)),
                worker("decode-0", "decode", seen("0.5.18", 524_288, 524_282, 2_040_000))));

    assertThat(plan)
        .isInstanceOfSatisfying(
            AdmissionPlan.Unprovable.class,
            u ->
                assertThat(u.reason())
                    .contains("different context lengths [524288, 1048576]")
                    .contains("the router's choice of worker cannot be forced"));
  }

  @Test
  void withEagleReservingSixOrMoreEveryBandIsEmptyAndS1AloneIsSent() {
    SglangAdmission eagle =
        new SglangAdmission(
            C,
            "0.5.18",
            OptionalLong.of(1_048_570),
            Optional.of(false),
            "EAGLE",
            Optional.of(false),
            OptionalLong.of(4),
            OptionalLong.of(3),
            OptionalLong.of(8),
            OptionalLong.of(1),
            OptionalLong.of(2_040_000));

    assertThat(
            lengths(
                SglangRouterPaths.plan(
                    List.of(worker("p", "prefill", eagle), worker("d", "decode", eagle)))))
        .containsExactly(C - 12);
  }

  /**
   * 0.5.22: no tag carries its max_req_input_len formula, but a reported M below C − R is sent as
   * the band prompt, whose refusal (SGLang's own sentence, with M at most the prompt) is the
   * evidence; an M that leaves no band cannot be checked.
   */
  @ParameterizedTest(name = "0.5.22 reporting M {0}: {1}")
  @CsvSource({"1048570, sent", "1048576, unprovable", "2000000, unprovable"})
  void anUnreadVersionIsProvenOnTheLimitItReports(long m, String what) {
    AdmissionPlan plan =
        SglangRouterPaths.plan(
            List.of(worker("prefill-0", "prefill", seen("0.5.22", C, m, 2_040_000))));

    if (what.equals("sent")) {
      assertThat(lengths(plan)).containsExactly(C, m);
    } else {
      assertThat(plan)
          .isInstanceOfSatisfying(
              AdmissionPlan.Unprovable.class,
              u -> assertThat(u.reason()).startsWith("prefill pod prefill-0: "));
    }
    // A single pod's own probe still requires the version's formula (issue 26 §1).
    assertThat(seen("0.5.22", C, 1_048_570, 2_040_000).paths())
        .isInstanceOf(AdmissionPlan.Unprovable.class);
  }

  @Test
  void noPrefillPodOrAnUnprovableWorkerIsInconclusiveAndSaysWhich() {
    assertThat(
            SglangRouterPaths.plan(
                List.of(worker("decode-0", "decode", seen("0.5.18", C, 1_048_570, 2_040_000)))))
        .isInstanceOfSatisfying(
            AdmissionPlan.Unprovable.class,
            u -> assertThat(u.reason()).startsWith("no prefill pod has passed its pool check"));
    SglangAdmission truncating =
        new SglangAdmission(
            C,
            "0.5.18",
            OptionalLong.of(1_048_570),
            Optional.of(true),
            null,
            Optional.empty(),
            OptionalLong.empty(),
            OptionalLong.empty(),
            OptionalLong.empty(),
            OptionalLong.of(1),
            OptionalLong.of(2_040_000));
    assertThat(
            SglangRouterPaths.plan(
                List.of(
                    worker("prefill-0", "prefill", seen("0.5.18", C, 1_048_570, 2_040_000)),
                    worker("decode-1", "decode", truncating))))
        .isInstanceOfSatisfying(
            AdmissionPlan.Unprovable.class,
            u ->
                assertThat(u.reason())
                    .startsWith("decode pod decode-1: ")
                    .contains("--allow-auto-truncate"));
  }

  /**
   * A worker reporting a disaggregation mode other than prefill or decode (a later release's
   * "encode", another spelling) is neither sized as a prefill worker nor checked as a decode one:
   * the route through it is unprovable, named.
   */
  @Test
  void aWorkerInAModeKvguardDoesNotSizeForIsInconclusiveAndSaysWhich() {
    assertThat(
            SglangRouterPaths.plan(
                List.of(
                    worker("prefill-0", "prefill", seen("0.5.18", C, 1_048_570, 2_040_000)),
                    worker("odd-0", "encode", seen("0.5.18", C, 1_048_570, 2_040_000)))))
        .isInstanceOfSatisfying(
            AdmissionPlan.Unprovable.class,
            u -> assertThat(u.reason()).startsWith("pod odd-0 reports disaggregation_mode encode"));
  }
}
