package io.kvguard.verdict;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The version part of a role's promise.
 *
 * @param engine the role's engine, by wire name; advisories are matched against it
 * @param minEngineVersion the oldest acceptable version; an unknown one (not a release) refuses
 *     every pod
 * @param allowUnknownVersions accept an absent or non-release version where a rule needs the
 *     version
 * @param advisories the advisories in force: {@link EngineAdvisories#BUILT_IN}, or none when
 *     disabled
 * @param routerProbeDecides the rejection probe will send the admission paths through the
 *     prefill/decode router ({@code check --pd-router}), so its answers, not a release named as
 *     fixed by a post-mortem alone ({@link EngineAdvisories.Fix.Claimed}), decide a pod at or after
 *     that release; without it such a pod stays shut
 */
public record VersionRules(
    String engine,
    Optional<EngineVersion> minEngineVersion,
    boolean allowUnknownVersions,
    List<EngineAdvisories.Advisory> advisories,
    boolean routerProbeDecides) {

  /** No version rule at all. */
  public static final VersionRules NONE = new VersionRules("", Optional.empty(), false, List.of());

  public VersionRules {
    Objects.requireNonNull(engine, "engine");
    Objects.requireNonNull(minEngineVersion, "minEngineVersion");
    advisories = List.copyOf(advisories);
  }

  /** Rules judged on the version alone: no router probe follows. */
  public VersionRules(
      String engine,
      Optional<EngineVersion> minEngineVersion,
      boolean allowUnknownVersions,
      List<EngineAdvisories.Advisory> advisories) {
    this(engine, minEngineVersion, allowUnknownVersions, advisories, false);
  }

  /**
   * The same rules, with the rejection probe through the prefill/decode router left to decide what
   * a claimed fixed release cannot.
   */
  public VersionRules decidedByRouterProbe() {
    return new VersionRules(engine, minEngineVersion, allowUnknownVersions, advisories, true);
  }

  /** The rules as a role spells them; a null or blank minimum means none. */
  public static VersionRules of(
      String engine,
      String minEngineVersion,
      boolean allowUnknownVersions,
      boolean advisoriesEnabled) {
    Optional<EngineVersion> minimum =
        minEngineVersion == null || minEngineVersion.isBlank()
            ? Optional.empty()
            : Optional.of(EngineVersion.parse(minEngineVersion));
    return new VersionRules(
        engine,
        minimum,
        allowUnknownVersions,
        advisoriesEnabled ? EngineAdvisories.BUILT_IN : List.of());
  }

  /** The advisories about this engine in this disaggregation mode, whatever its version. */
  List<EngineAdvisories.Advisory> concerning(String disaggregationMode) {
    return advisories.stream().filter(a -> a.concerns(engine, disaggregationMode)).toList();
  }
}
