package io.kvguard.gate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.zjsonpatch.JsonPatch;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden files of exactly what kvguard writes to a pod. Each folder under golden/gate holds
 * in-pod.yaml and decision.properties, and out-condition-patch.json / out-label-patch.json where a
 * write is expected (no file: no write). decision.properties without {@code open} leaves condition
 * and label alone; with {@code policy} the write also brings that policy's verdict record to
 * record.json (no record.json: removes it). Run with -Dkvguard.golden.update=true to rewrite the
 * out- files, then review the diff.
 */
class GatePatchGoldenTest {
  private static final Path ROOT = Path.of("src/test/resources/golden/gate");
  private static final Instant NOW = Instant.parse("2026-12-02T12:00:00Z");
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  private static final boolean UPDATE = Boolean.getBoolean("kvguard.golden.update");

  static Stream<Path> cases() throws IOException {
    return Files.list(ROOT).filter(Files::isDirectory).sorted();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void patchesMatchTheGoldenFiles(Path folder) throws IOException {
    Set<String> used = new HashSet<>(List.of("in-pod.yaml", "decision.properties"));
    Pod pod = SERIALIZATION.unmarshal(Files.readString(folder.resolve("in-pod.yaml")), Pod.class);
    Properties props = new Properties();
    try (Reader reader =
        Files.newBufferedReader(folder.resolve("decision.properties"), StandardCharsets.UTF_8)) {
      props.load(reader);
    }
    GateDecision decision =
        props.getProperty("open") == null
            ? null
            : new GateDecision(
                Boolean.parseBoolean(props.getProperty("open")),
                GateReason.valueOf(props.getProperty("reason")),
                props.getProperty("message"));
    RecordUpdate update = null;
    if (props.getProperty("policy") != null) {
      Path recordFile = folder.resolve("record.json");
      VerdictRecord record = null;
      if (Files.exists(recordFile)) {
        record = JSON.readValue(Files.readString(recordFile), VerdictRecord.class);
        used.add("record.json");
      }
      update = new RecordUpdate(props.getProperty("policy"), record);
    }

    Optional<String> conditionPatch = GatePatchPlanner.conditionPatch(pod, decision, update, NOW);
    Optional<String> labelPatch =
        decision == null ? Optional.empty() : GatePatchPlanner.labelPatch(pod, decision);
    check(folder, "out-condition-patch.json", conditionPatch, used);
    check(folder, "out-label-patch.json", labelPatch, used);
    // The patches must apply to the pod as the API server holds it (its JSON, not fabric8's reading
    // of it, which turns an absent list into an empty one) and leave the gate saying what the
    // decision says.
    JsonNode stored =
        SERIALIZATION.unmarshal(Files.readString(folder.resolve("in-pod.yaml")), JsonNode.class);
    JsonNode afterCondition =
        conditionPatch.isPresent()
            ? JsonPatch.apply(JSON.readTree(conditionPatch.get()), stored)
            : stored;
    if (update != null) {
      // The record the pod carries after the write is exactly the one asked for, and the other
      // policies' stay.
      Pod written = SERIALIZATION.convertValue(afterCondition, Pod.class);
      assertThat(VerdictRecords.of(written, update.modelDeployment()))
          .as("%s: record after the write", folder)
          .isEqualTo(update.record());
      Map<String, VerdictRecord> others = new java.util.TreeMap<>(VerdictRecords.of(pod));
      others.remove(update.modelDeployment());
      Map<String, VerdictRecord> othersAfter = new java.util.TreeMap<>(VerdictRecords.of(written));
      othersAfter.remove(update.modelDeployment());
      assertThat(othersAfter).as("%s: other policies' records", folder).isEqualTo(others);
    }
    if (conditionPatch.isPresent() && decision != null) {
      JsonNode patched = afterCondition;
      List<JsonNode> gates = new ArrayList<>();
      patched
          .path("status")
          .path("conditions")
          .forEach(
              c -> {
                if (GateNames.CONDITION_TYPE.equals(c.path("type").asText())) {
                  gates.add(c);
                }
              });
      assertThat(gates).as("%s: one gate condition after the patch", folder).hasSize(1);
      assertThat(gates.get(0).path("status").asText())
          .isEqualTo(decision.open() ? "True" : "False");
      assertThat(gates.get(0).path("reason").asText()).isEqualTo(decision.reason().name());
    }
    if (labelPatch.isPresent()) {
      JsonNode patched = JsonPatch.apply(JSON.readTree(labelPatch.get()), stored);
      JsonNode label = patched.path("metadata").path("labels").path(GateNames.VERIFIED_LABEL);
      if (decision.open() && decision.reason() != GateReason.PolicyRemoved) {
        assertThat(label.asText()).as("%s: label after the patch", folder).isEqualTo("true");
      } else {
        assertThat(label.isMissingNode()).as("%s: no label after the patch", folder).isTrue();
      }
    }

    try (Stream<Path> files = Files.list(folder)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .as("unused golden files in %s", folder)
          .allMatch(used::contains);
    }
  }

  private static void check(Path folder, String name, Optional<String> patch, Set<String> used)
      throws IOException {
    Path file = folder.resolve(name);
    Optional<String> pretty = patch.map(GatePatchGoldenTest::pretty);
    if (UPDATE) {
      if (pretty.isPresent()) {
        Files.writeString(file, pretty.get());
      } else {
        Files.deleteIfExists(file);
      }
    }
    if (Files.exists(file)) {
      used.add(name);
      assertThat(pretty).as("%s expects a write", file).hasValue(Files.readString(file));
    } else {
      assertThat(pretty).as("%s: no write expected", file).isEmpty();
    }
  }

  private static String pretty(String json) {
    try {
      return JSON.writeValueAsString(JSON.readTree(json)) + "\n";
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
