package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.customresource.RoleStatus;
import io.kvguard.verdict.Verdict;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Builds a ModelDeployment's status from the previous one and this pass's assessments. Pure: timestamps move
 * only where something flipped, so an unchanged cluster gives an identical status and no write.
 */
final class StatusFactory {
  static final String READY = "Ready";
  static final String POOLS_VERIFIED = "PoolsVerified";
  static final String INVALID_SPEC = "InvalidSpec";

  private StatusFactory() {}

  static ModelDeploymentStatus build(ModelDeployment md, List<PodAssessment> assessments,
      Map<String, List<String>> roleNotes, Optional<String> invalidSpec, List<String> conflicts, Instant now) {
    ModelDeploymentStatus previous = md.getStatus() == null ? new ModelDeploymentStatus() : md.getStatus();
    Map<String, PodVerdictStatus> before = previous.pods == null ? Map.of()
        : previous.pods.stream().collect(Collectors.toMap(p -> p.name, Function.identity(), (a, b) -> a));
    String stamp = now.truncatedTo(ChronoUnit.SECONDS).toString();
    long generation = md.getMetadata().getGeneration() == null ? 0 : md.getMetadata().getGeneration();

    ModelDeploymentStatus status = new ModelDeploymentStatus();
    status.observedGeneration = generation;
    List<PodAssessment> sorted = new ArrayList<>(assessments);
    sorted.sort(Comparator.comparing(PodAssessment::podName));
    for (PodAssessment assessment : sorted) {
      PodVerdictStatus entry = podEntry(assessment, before.get(assessment.podName()), stamp);
      if (assessment.refusal() != null && assessment.verdict().verified()) {
        // Only a refusal this container gave (or one recorded for it and this very prompt) is written down,
        // with the status and error class the engine really answered: the record lets a restarted operator
        // keep the gate open without sending the prompt again, and say what was seen.
        entry.rejectionRefusedBy = assessment.containerID();
        entry.rejectionPromptTokens = assessment.refusal().promptTokens();
        entry.rejectionRefusalStatus = assessment.refusal().status();
        entry.rejectionRefusalError = assessment.refusal().errorClass();
      }
      status.pods.add(entry);
    }

    int selected = 0;
    int verified = 0;
    List<String> shortRoles = new ArrayList<>();
    boolean noPods = true;
    List<RoleSpec> roles = md.getSpec() == null || md.getSpec().getRoles() == null ? List.of() : md.getSpec().getRoles();
    for (RoleSpec role : roles) {
      RoleStatus entry = new RoleStatus();
      entry.name = role.getName();
      entry.minReadyPods = role.effectiveMinReadyPods();
      List<PodAssessment> ofRole = sorted.stream().filter(a -> a.role().equals(role.getName())).toList();
      entry.selected = ofRole.size();
      entry.verified = (int) ofRole.stream().filter(a -> a.verdict().verified()).count();
      entry.smallestPoolTokens = ofRole.stream().filter(a -> a.observation() != null && !a.observation().upperBoundOnly())
          .mapToLong(a -> a.observation().poolTokens()).min().stream().boxed().findFirst().orElse(null);
      entry.notes.addAll(roleNotes.getOrDefault(role.getName(), List.of()));
      status.roles.add(entry);
      selected += entry.selected;
      verified += entry.verified;
      noPods &= entry.selected == 0;
      if (entry.verified < entry.minReadyPods) {
        shortRoles.add("role " + role.getName() + ": " + entry.verified + "/" + entry.selected
            + " verified, needs " + entry.minReadyPods);
      }
    }
    status.verified = verified + "/" + selected;

    List<Condition> conditions = new ArrayList<>();
    if (invalidSpec.isPresent()) {
      conditions.add(condition(previous, READY, false, "InvalidSpec", invalidSpec.get(), generation, stamp));
      conditions.add(condition(previous, POOLS_VERIFIED, false, "InvalidSpec", invalidSpec.get(), generation, stamp));
      conditions.add(condition(previous, INVALID_SPEC, true, "InvalidSpec", invalidSpec.get(), generation, stamp));
      status.conditions = conditions;
      return status;
    }
    String conflictSuffix = conflicts.isEmpty() ? "" : "; ConflictingPolicies: " + String.join("; ", conflicts);
    if (shortRoles.isEmpty()) {
      conditions.add(condition(previous, READY, true, "MinReadyPodsVerified",
          "every role has its minimum of verified pods (" + status.verified + " pods verified)", generation, stamp));
    } else if (noPods) {
      conditions.add(condition(previous, READY, false, "NoPods",
          "no role's selector matches any pod", generation, stamp));
    } else {
      conditions.add(condition(previous, READY, false, "NotEnoughVerifiedPods",
          String.join("; ", shortRoles), generation, stamp));
    }
    if (selected == 0) {
      conditions.add(condition(previous, POOLS_VERIFIED, false, "NoPods",
          "no pod is selected" + conflictSuffix, generation, stamp));
    } else if (verified == selected) {
      conditions.add(condition(previous, POOLS_VERIFIED, true, "AllPodsVerified",
          "all " + selected + " selected pods verified" + conflictSuffix, generation, stamp));
    } else {
      conditions.add(condition(previous, POOLS_VERIFIED, false, "PodsNotVerified",
          (selected - verified) + " of " + selected + " selected pods not verified" + firstProblem(sorted)
              + conflictSuffix, generation, stamp));
    }
    conditions.add(condition(previous, INVALID_SPEC, false, "SpecValid", "the spec can be applied", generation, stamp));
    status.conditions = conditions;
    return status;
  }

  private static String firstProblem(List<PodAssessment> sorted) {
    return sorted.stream().filter(a -> !a.verdict().verified()).findFirst()
        .map(a -> ", e.g. " + a.podName() + ": " + a.verdict().reason() + " (" + a.verdict().message() + ")")
        .orElse("");
  }

  private static PodVerdictStatus podEntry(PodAssessment assessment, PodVerdictStatus before, String stamp) {
    PodVerdictStatus entry = new PodVerdictStatus();
    entry.name = assessment.podName();
    entry.role = assessment.role();
    entry.verdict = assessment.verdict().verdict().name();
    entry.reason = assessment.verdict().reason().name();
    entry.message = assessment.verdict().message();
    if (assessment.observation() != null) {
      entry.poolTokens = assessment.observation().poolTokens();
      entry.poolSource = assessment.observation().upperBoundOnly() ? assessment.observation().poolSource().name() : null;
      entry.engineContextTokens = assessment.observation().engineContextTokens().isPresent()
          ? assessment.observation().engineContextTokens().getAsLong() : null;
      entry.engineVersion = assessment.observation().engineVersion();
      entry.disaggregationMode = assessment.observation().disaggregationMode();
    }
    // containerID records which process the verdict is about; it is only meaningful once judged.
    if (assessment.verdict().verdict() != Verdict.Unknown) {
      entry.containerID = assessment.containerID();
      entry.restartCount = assessment.restartCount();
    }
    entry.gating = assessment.labelOnly() ? "LabelOnly" : "ReadinessGate";
    entry.notes.addAll(assessment.notes());
    boolean same = before != null && entry.verdict.equals(before.verdict) && entry.reason.equals(before.reason);
    entry.lastTransitionTime = same && before.lastTransitionTime != null ? before.lastTransitionTime : stamp;
    return entry;
  }

  private static Condition condition(ModelDeploymentStatus previous, String type, boolean value, String reason,
      String message, long generation, String stamp) {
    String status = value ? "True" : "False";
    Optional<Condition> before = previous.conditions == null ? Optional.empty()
        : previous.conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
    String transition = before.filter(c -> status.equals(c.getStatus()) && c.getLastTransitionTime() != null)
        .map(Condition::getLastTransitionTime).orElse(stamp);
    return new ConditionBuilder().withType(type).withStatus(status).withReason(reason).withMessage(message)
        .withObservedGeneration(generation).withLastTransitionTime(transition).build();
  }
}
