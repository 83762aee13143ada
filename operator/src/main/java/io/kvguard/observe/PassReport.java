package io.kvguard.observe;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.gate.VerdictRecord;
import java.util.List;
import java.util.Map;

/**
 * What one pass of one ModelDeployment did, as the {@link Observer} announces it: produced by the
 * pass once, at its end, instead of the pass calling events, metrics and logs wherever something
 * happened.
 *
 * @param before what the policy last concluded per pod name (records on the pods, or status
 *     entries)
 * @param entries this pass's conclusion for every pod (the status lists only some of them)
 * @param pods the figures each judged pod was gauged with
 * @param advisories engine advisories that apply to some pods and only warn
 * @param flips gates whose condition this pass turned (or wrote for the first time)
 * @param writeFailures gate writes the API server refused; those pods keep the gate they had
 * @param released pods that left the policy this pass: what was kept about them goes
 */
public record PassReport(
    ModelDeployment md,
    Map<String, VerdictRecord> before,
    List<PodVerdictStatus> entries,
    List<PodFigures> pods,
    List<Advisory> advisories,
    List<GateFlip> flips,
    List<WriteFailure> writeFailures,
    List<Released> released) {

  public PassReport {
    before = Map.copyOf(before);
    entries = List.copyOf(entries);
    pods = List.copyOf(pods);
    advisories = List.copyOf(advisories);
    flips = List.copyOf(flips);
    writeFailures = List.copyOf(writeFailures);
    released = List.copyOf(released);
  }

  /**
   * A judged pod: its pool in tokens (-1 when no figures are known) and whether its verdict is
   * Verified.
   */
  public record PodFigures(String role, String pod, long poolTokens, boolean verified) {}

  /** An engine advisory that warns about {@code pods} of a role. */
  public record Advisory(String role, String advisory, String message, List<String> pods) {
    public Advisory {
      pods = List.copyOf(pods);
    }
  }

  /** A gate condition written to {@code open} (true) or shut for a pod of {@code role}. */
  public record GateFlip(String role, boolean open) {}

  /** A gate write the API server refused. */
  public record WriteFailure(Pod pod, RuntimeException error) {}

  /**
   * A pod the policy no longer selects, with the role it was judged under (null when not known).
   */
  public record Released(String pod, String role) {}
}
