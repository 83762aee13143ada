package io.kvguard.reconciler;

import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.customresource.Scheme;
import java.util.ArrayList;
import java.util.List;

/** Facts about a role's configuration that the status must make visible. */
final class RoleNotes {
  private RoleNotes() {}

  /** The start of the note {@link #of} gives a role whose probes send a bearer token in clear. */
  static final String CLEARTEXT_CREDENTIALS = "probe.authSecretRef is sent over plain HTTP";

  static List<String> of(ModelDeploymentSpec spec, RoleSpec role) {
    List<String> notes = new ArrayList<>();
    if (sendsCredentialsInClear(spec, role)) {
      notes.add(
          CLEARTEXT_CREDENTIALS
              + ": the engine's API key crosses the pod network unencrypted on every probe, where"
              + " anyone who can capture it may replay it; set the role's scheme: https (spec.probe.tls"
              + " for the engine's CA)");
    }
    if (role.effectiveAllowEngineContextAbovePool()) {
      notes.add(
          "allowEngineContextAbovePool is set: engines whose context length exceeds their KV pool are"
              + " accepted, and prompts longer than the pool reach the engine's over-pool rejection path");
    }
    if (Boolean.TRUE.equals(role.getAllowUnknownVersions())) {
      notes.add(
          "allowUnknownVersions is set: engines reporting a dev or unparseable version are not refused for it");
    }
    return notes;
  }

  /** Whether the role's probes carry the policy's bearer token over plain HTTP. */
  static boolean sendsCredentialsInClear(ModelDeploymentSpec spec, RoleSpec role) {
    return spec.effectiveProbe().getAuthSecretRef() != null
        && role.effectiveScheme() == Scheme.HTTP;
  }
}
