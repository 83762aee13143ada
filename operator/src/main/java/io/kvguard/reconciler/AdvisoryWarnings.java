package io.kvguard.reconciler;

import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.verdict.EngineAdvisories;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The engine advisories that apply to a policy's pods but only warn (no fixed release verified),
 * per role: what the role's status notes, the Warning event and the {@code
 * kvguard_engine_advisory_warnings} gauge report.
 */
final class AdvisoryWarnings {
  /** How many pod names a role note lists before "and N more". */
  static final int LISTED_PODS = 3;

  private AdvisoryWarnings() {}

  /** One advisory warning for one role: the pods it applies to and what it says. */
  record Found(String role, String advisory, String message, List<String> pods, int selected) {
    String note() {
      String listed =
          String.join(", ", pods.subList(0, Math.min(LISTED_PODS, pods.size())))
              + (pods.size() > LISTED_PODS ? " and " + (pods.size() - LISTED_PODS) + " more" : "");
      return "engine advisory "
          + advisory
          + " (warning) applies to "
          + pods.size()
          + " of "
          + selected
          + " pods ("
          + listed
          + "): "
          + message;
    }
  }

  static List<Found> of(ModelDeployment md, List<PodAssessment> assessments) {
    List<Found> found = new ArrayList<>();
    List<RoleSpec> roles =
        md.getSpec() == null || md.getSpec().getRoles() == null
            ? List.of()
            : md.getSpec().getRoles();
    for (RoleSpec role : roles) {
      if (role.getEngine() == null) {
        continue;
      }
      Map<String, String> messages = new LinkedHashMap<>();
      Map<String, List<String>> pods = new LinkedHashMap<>();
      int selected = 0;
      for (PodAssessment assessment : assessments) {
        if (!assessment.role().equals(role.getName())) {
          continue;
        }
        selected++;
        if (assessment.observation() == null) {
          continue;
        }
        for (EngineAdvisories.Warning warning :
            EngineAdvisories.warnings(
                RolePolicies.of(md.getSpec(), role).versions(), assessment.observation())) {
          messages.putIfAbsent(warning.advisory().id(), warning.message());
          pods.computeIfAbsent(warning.advisory().id(), id -> new ArrayList<>())
              .add(assessment.podName());
        }
      }
      for (Map.Entry<String, List<String>> entry : pods.entrySet()) {
        found.add(
            new Found(
                role.getName(),
                entry.getKey(),
                messages.get(entry.getKey()),
                List.copyOf(entry.getValue()),
                selected));
      }
    }
    return found;
  }
}
