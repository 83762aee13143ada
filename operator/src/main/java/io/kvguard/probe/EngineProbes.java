package io.kvguard.probe;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.GenericProbeSpec;
import io.kvguard.customresource.RoleSpec;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The registry of probes, one per engine. The generic probe is built per role from its settings;
 * every other probe is shared.
 */
public final class EngineProbes {
  private final Map<Engine, EngineProbe> probes = new EnumMap<>(Engine.class);
  private final Function<GenericProbeSpec, EngineProbe> generic;

  public EngineProbes(List<EngineProbe> probes) {
    this(probes, null);
  }

  /**
   * {@code generic} builds the probe of a generic role; null means a registered GENERIC probe is
   * used as is.
   */
  public EngineProbes(List<EngineProbe> probes, Function<GenericProbeSpec, EngineProbe> generic) {
    for (EngineProbe probe : probes) {
      if (this.probes.put(probe.engine(), probe) != null) {
        throw new IllegalArgumentException("two probes for engine " + probe.engine().wireName());
      }
    }
    this.generic = generic;
  }

  public static EngineProbes standard(EngineHttp http) {
    return new EngineProbes(
        List.of(
            new SglangProbe(http),
            new VllmProbe(http),
            new TgiProbe(http),
            new TrtllmProbe(http),
            new LlamaCppProbe(http),
            new OllamaProbe(http)),
        spec -> new GenericProbe(http, spec));
  }

  public EngineProbe forEngine(Engine engine) {
    EngineProbe probe = probes.get(engine);
    if (probe == null) {
      throw new IllegalStateException("no probe for engine " + engine.wireName());
    }
    return probe;
  }

  /**
   * The probe for a role's pods: its engine's, configured by the role where the engine needs it.
   */
  public EngineProbe forRole(RoleSpec role) {
    if (role.getEngine() == Engine.GENERIC && generic != null) {
      return generic.apply(role.getGeneric());
    }
    return forEngine(role.getEngine());
  }

  /**
   * What, besides engine, scheme and port, decides what a role's probe reads (part of the probe
   * fingerprint).
   */
  public static String configuration(RoleSpec role) {
    return role.getEngine() == Engine.GENERIC && role.getGeneric() != null
        ? role.getGeneric().fingerprint()
        : "";
  }
}
