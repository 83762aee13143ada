package io.kvguard.customresource;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;

/**
 * A stored ModelDeployment kvguard's classes cannot hold is read as one object with a named
 * problem, exactly as the informer reads it (fabric8's serialization), never as an exception that
 * stops the informer and with it the operator (issue 29).
 */
class UnreadableModelDeploymentTest {
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private static String stored(String role, String status) {
    return """
        {"apiVersion": "kvguard.io/v1alpha1", "kind": "ModelDeployment",
         "metadata": {"name": "glm", "namespace": "inference", "uid": "u-1"},
         "spec": {"model": "m", "contextWindow": 1048576,
                  "roles": [{"name": "serve", "selector": {"matchLabels": {"a": "b"}},
                             "engine": "sglang", "port": 30000},
                            %s]},
         "status": %s}
        """
        .formatted(role, status);
  }

  private static final String GOOD_ROLE =
      "{\"name\": \"decode\", \"selector\": {\"matchLabels\": {\"a\": \"c\"}},"
          + " \"engine\": \"sglang\", \"port\": 30000}";

  @Test
  void aNumberBeyondIntegerNamesItsFieldInsteadOfFailing() {
    ModelDeployment md =
        SERIALIZATION.unmarshal(
            stored(GOOD_ROLE.replace("30000}", "30000, \"minReadyPods\": 3000000000}"), "{}"),
            ModelDeployment.class);

    assertThat(md.getMetadata().getName()).isEqualTo("glm");
    assertThat(md.getSpec().unreadable()).isPresent();
    assertThat(md.getSpec().unreadable().get().field()).isEqualTo("spec.roles[1].minReadyPods");
    assertThat(md.getSpec().unreadable().get().problem()).contains("3000000000");
    // It selects nothing and opens nothing by default.
    assertThat(md.getSpec().getRoles()).isEmpty();
    assertThat(md.getSpec().getEnforcement()).isNull();
    assertThat(md.getStatus().unreadable()).isEmpty();
  }

  @Test
  void aStringWhereANumberBelongsNamesItsField() {
    ModelDeployment md =
        SERIALIZATION.unmarshal(
            stored(GOOD_ROLE, "{}")
                .replace("\"contextWindow\": 1048576", "\"contextWindow\": \"big\""),
            ModelDeployment.class);

    assertThat(md.getSpec().unreadable())
        .get()
        .extracting(Unreadable::field)
        .isEqualTo("spec.contextWindow");
  }

  @Test
  void aNestedFieldOfTheProbeNamesItsWholePath() {
    ModelDeployment md =
        SERIALIZATION.unmarshal(
            stored(GOOD_ROLE, "{}")
                .replace("\"roles\":", "\"probe\": {\"periodSeconds\": 99999999999}, \"roles\":"),
            ModelDeployment.class);

    assertThat(md.getSpec().unreadable())
        .get()
        .extracting(Unreadable::field)
        .isEqualTo("spec.probe.periodSeconds");
  }

  @Test
  void anUnreadableStatusLeavesTheSpecReadable() {
    ModelDeployment md =
        SERIALIZATION.unmarshal(
            stored(GOOD_ROLE, "{\"pods\": [{\"name\": \"p\", \"restartCount\": 3000000000}]}"),
            ModelDeployment.class);

    assertThat(md.getSpec().unreadable()).isEmpty();
    assertThat(md.getSpec().getRoles()).hasSize(2);
    assertThat(md.getStatus().unreadable())
        .get()
        .extracting(Unreadable::field)
        .isEqualTo("status.pods[0].restartCount");
    assertThat(md.getStatus().pods).isEmpty();
  }

  /**
   * Every write kvguard makes to a ModelDeployment is a patch between two serializations of it: an
   * unreadable part must serialize as stored, or the patch would erase the tenant's spec.
   */
  @Test
  void anUnreadablePartIsWrittenBackExactlyAsStored() {
    String text =
        stored(
            GOOD_ROLE.replace("30000}", "30000, \"minReadyPods\": 3000000000}"),
            "{\"podsNotListed\": \"many\"}");
    ModelDeployment md = SERIALIZATION.unmarshal(text, ModelDeployment.class);

    JsonNode written = SERIALIZATION.convertValue(md, JsonNode.class);
    JsonNode original = SERIALIZATION.unmarshal(text, JsonNode.class);
    assertThat(written.get("spec")).isEqualTo(original.get("spec"));
    assertThat(written.get("status")).isEqualTo(original.get("status"));
    ModelDeployment copy = SERIALIZATION.clone(md);
    assertThat(copy.getSpec().unreadable()).isPresent();
    assertThat(copy.getStatus().unreadable()).isPresent();
  }

  @Test
  void aReadableSpecIsReadAndWrittenAsBefore() {
    String text = stored(GOOD_ROLE, "{\"podsNotListed\": 3}");
    ModelDeployment md = SERIALIZATION.unmarshal(text, ModelDeployment.class);

    assertThat(md.getSpec().unreadable()).isEmpty();
    assertThat(md.getSpec().getRoles())
        .extracting(RoleSpec::getName)
        .containsExactly("serve", "decode");
    assertThat(md.getStatus().podsNotListed).isEqualTo(3);
    JsonNode written = SERIALIZATION.convertValue(md, JsonNode.class);
    assertThat(written.at("/spec/roles/1/minReadyPods").asInt()).isEqualTo(1);
    assertThat(written.at("/spec/enforcement").asText()).isEqualTo("Enforce");
  }
}
