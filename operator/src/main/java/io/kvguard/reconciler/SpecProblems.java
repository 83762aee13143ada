package io.kvguard.reconciler;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.RoleSpec;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The spec rules checked again at run time. The CRD's schema and CEL rules reject these on a real
 * API server; this covers clusters where the CRD is older than the operator, and rules a CRD cannot
 * express (selector operators), and stored specs kvguard's classes cannot hold at all (an
 * unreadable spec, see {@link io.kvguard.customresource.Unreadable}). A spec with a problem gates
 * nothing open.
 */
final class SpecProblems {
  private SpecProblems() {}

  static Optional<String> of(ModelDeploymentSpec spec) {
    if (spec == null) {
      return Optional.of("spec is missing");
    }
    if (spec.unreadable().isPresent()) {
      // Stored before the CRD bounded it, or written by an older CRD: nothing of it can be
      // trusted, so like any other problem it gates nothing open (issue 29).
      return Optional.of("cannot read " + spec.unreadable().get().describe());
    }
    if (spec.getModel() == null || spec.getModel().isBlank()) {
      return Optional.of("spec.model is required");
    }
    if (spec.getContextWindow() == null || spec.getContextWindow() < 1) {
      return Optional.of("spec.contextWindow must be >= 1");
    }
    double ratio = spec.effectiveMinPoolRatio();
    if (!(ratio >= 1.0) || Double.isInfinite(ratio)) {
      return Optional.of("spec.minPoolRatio must be a finite number >= 1.0");
    }
    if (spec.effectiveProbe().effectivePeriodSeconds() < 1
        || spec.effectiveProbe().effectiveTimeoutSeconds() < 1) {
      return Optional.of("spec.probe.periodSeconds and timeoutSeconds must be >= 1");
    }
    io.kvguard.customresource.RejectionRouterSpec router =
        spec.effectiveRejectionProbe().getRouter();
    if (router != null && router.problem().isPresent()) {
      return router.problem();
    }
    if (spec.getRoles() == null || spec.getRoles().isEmpty()) {
      return Optional.of("spec.roles must list at least one role");
    }
    Set<String> names = new HashSet<>();
    for (RoleSpec role : spec.getRoles()) {
      String where = "role " + (role.getName() == null ? "(unnamed)" : role.getName());
      if (role.getName() == null || role.getName().isBlank()) {
        return Optional.of("every role needs a name");
      }
      if (!names.add(role.getName())) {
        return Optional.of("role name " + role.getName() + " is used twice");
      }
      if (role.getEngine() == null) {
        return Optional.of(where + ": engine is required");
      }
      if (role.getPort() == null
          || (role.getPort().getIntVal() == null && role.getPort().getStrVal() == null)) {
        return Optional.of(where + ": port is required");
      }
      Integer number = role.getPort().getIntVal();
      if (number != null && (number < 1 || number > 65535)) {
        return Optional.of(where + ": port " + number + " is out of range 1-65535");
      }
      if (role.getMetricsPort() != null
          && role.getMetricsPort().getIntVal() != null
          && (role.getMetricsPort().getIntVal() < 1 || role.getMetricsPort().getIntVal() > 65535)) {
        return Optional.of(
            where
                + ": metricsPort "
                + role.getMetricsPort().getIntVal()
                + " is out of range 1-65535");
      }
      if (role.getBlockCountIsPool() != null
          && role.getEngine() != Engine.TRTLLM
          && role.getEngine() != Engine.VLLM) {
        return Optional.of(where + ": blockCountIsPool applies to engines trtllm and vllm only");
      }
      if (role.effectiveMinReadyPods() < 0) {
        return Optional.of(where + ": minReadyPods must be >= 0");
      }
      Optional<String> selector = LabelSelectors.problem(role.getSelector());
      if (selector.isPresent()) {
        return Optional.of(where + ": " + selector.get());
      }
    }
    return Optional.empty();
  }
}
