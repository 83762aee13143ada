package io.kvguard.e2e;

/**
 * The end-to-end scenarios on the embedded API server: they run in every build, so the suite cannot
 * rot.
 */
class GateScenariosIT extends AbstractGateScenarios {
  @Override
  protected ClusterDriver startCluster() {
    return new EmbeddedClusterDriver();
  }
}
