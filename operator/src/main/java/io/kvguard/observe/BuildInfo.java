package io.kvguard.observe;

/** The version Maven wrote into the jar's manifest ("dev" when run from classes). */
public final class BuildInfo {
  private BuildInfo() {}

  public static String version() {
    String version = BuildInfo.class.getPackage().getImplementationVersion();
    return version == null ? "dev" : version;
  }
}
