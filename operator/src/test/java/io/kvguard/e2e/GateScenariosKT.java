package io.kvguard.e2e;

import org.junit.jupiter.api.Assumptions;

/**
 * The end-to-end scenarios on a real cluster: {@code mvn -B -Pe2e verify
 * -Dkvguard.e2e.kubeconfig=...}. Skipped, with the command to run, when no cluster is configured.
 */
class GateScenariosKT extends AbstractGateScenarios {

  private static boolean toldWhySkipped;

  @Override
  protected ClusterDriver startCluster() throws Exception {
    if (!RealClusterDriver.Settings.configured() && !toldWhySkipped) {
      // Surefire's summary shows only "Skipped: 3"; the profile prints test output, so say why
      // once.
      System.err.println("[kvguard e2e] SKIPPED: " + RealClusterDriver.NOT_CONFIGURED);
      toldWhySkipped = true;
    }
    Assumptions.assumeTrue(
        RealClusterDriver.Settings.configured(), RealClusterDriver.NOT_CONFIGURED);
    return new RealClusterDriver(RealClusterDriver.Settings.fromSystemProperties());
  }
}
