package io.kvguard.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.kvguard.verdict.GateReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The reference and the runbook cannot fall behind the CRD and the reasons. */
class DocsCoverageTest {
  private static final Path DOCS = Path.of("../docs");

  @Test
  void everySpecFieldOfTheCrdIsInTheReference() throws IOException {
    JsonNode crd =
        new ObjectMapper(new YAMLFactory())
            .readTree(
                Files.readString(
                    Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml")));
    List<String> paths = new ArrayList<>();
    collect(crd.at("/spec/versions/0/schema/openAPIV3Schema/properties/spec"), "spec", paths);
    String reference = Files.readString(DOCS.resolve("reference.md"));
    assertThat(paths).hasSizeGreaterThan(10);
    assertThat(paths)
        .allSatisfy(
            path ->
                assertThat(reference)
                    .as("docs/reference.md documents %s", path)
                    .contains("`" + path + "`"));
  }

  @Test
  void everyReasonHasARunbookSection() throws IOException {
    String runbook = Files.readString(DOCS.resolve("runbook.md"));
    for (GateReason reason : GateReason.values()) {
      assertThat(runbook)
          .as("docs/runbook.md has a section for %s", reason)
          .contains("\n## " + reason.name() + "\n");
    }
  }

  @Test
  void theReferenceDocumentsTheHungProbeLimitAndItsGaugeAsTheCodeHasThem() throws IOException {
    String reference = Files.readString(DOCS.resolve("reference.md"));
    assertThat(reference)
        .contains(
            "| `KVGUARD_HUNG_PROBE_LIMIT` | `"
                + io.kvguard.reconciler.ProbeLimits.DEFAULT_HUNG_PROBE_LIMIT
                + "` (chart: `engineProbes.hungLimit`) |")
        .contains("| `" + io.kvguard.observe.KvguardMetrics.PROBES_HUNG + "{namespace}` |")
        .contains(
            "| `" + io.kvguard.observe.KvguardMetrics.REJECTION_PROBES_HUNG + "{namespace}` |")
        .contains(
            "longer than "
                + io.kvguard.reconciler.ProbeLimits.DEFAULT_HUNG_AFTER.toMillis() / 1000.0
                + " s");
  }

  private static void collect(JsonNode schema, String path, List<String> paths) {
    Iterator<Map.Entry<String, JsonNode>> fields = schema.path("properties").fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      String child = path + "." + field.getKey();
      paths.add(child);
      JsonNode value = field.getValue();
      collect(value, child, paths);
      if (value.has("items")) {
        collect(value.get("items"), child + "[]", paths);
      }
    }
  }
}
