package io.kvguard.reconciler;

import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.VersionRules;
import java.util.Optional;

/**
 * What a ModelDeployment's role promises, as the verdict judges it. The operator and {@code check}
 * both read a spec through here, so the preflight and the operator judge the same spec and the same
 * answer alike (version rules and advisories included).
 */
public final class RolePolicies {
  private RolePolicies() {}

  /** The policy of one role of a spec without {@link #problem problems}. */
  public static PoolPolicy of(ModelDeploymentSpec spec, RoleSpec role) {
    return new PoolPolicy(
        spec.getContextWindow(),
        spec.effectiveMinPoolRatio(),
        role.effectiveAllowEngineContextAbovePool(),
        VersionRules.of(
            role.getEngine().wireName(),
            role.getMinEngineVersion(),
            role.effectiveAllowUnknownVersions(),
            spec.effectiveEngineAdvisories()),
        role.effectiveBlockCountIsPool());
  }

  /**
   * Why kvguard cannot apply the spec, in the words the operator shows on the pods it shuts; empty
   * if it can.
   */
  public static Optional<String> problem(ModelDeploymentSpec spec) {
    return SpecProblems.of(spec);
  }
}
