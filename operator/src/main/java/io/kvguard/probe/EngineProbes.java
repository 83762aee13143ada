package io.kvguard.probe;

import io.kvguard.customresource.Engine;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/** The registry of probes, one per engine. */
public final class EngineProbes {
  private final Map<Engine, EngineProbe> probes = new EnumMap<>(Engine.class);

  public EngineProbes(List<EngineProbe> probes) {
    for (EngineProbe probe : probes) {
      if (this.probes.put(probe.engine(), probe) != null) {
        throw new IllegalArgumentException("two probes for engine " + probe.engine().wireName());
      }
    }
  }

  public static EngineProbes standard(EngineHttp http) {
    return new EngineProbes(List.of(new SglangProbe(http), new VllmProbe(http)));
  }

  public EngineProbe forEngine(Engine engine) {
    EngineProbe probe = probes.get(engine);
    if (probe == null) {
      throw new IllegalStateException("no probe for engine " + engine.wireName());
    }
    return probe;
  }
}
