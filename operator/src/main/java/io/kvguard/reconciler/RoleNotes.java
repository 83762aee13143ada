package io.kvguard.reconciler;

import io.kvguard.customresource.RoleSpec;
import java.util.ArrayList;
import java.util.List;

/** Facts about a role's configuration that the status must make visible. */
final class RoleNotes {
  private RoleNotes() {}

  static List<String> of(RoleSpec role) {
    List<String> notes = new ArrayList<>();
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
}
