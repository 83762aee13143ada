package io.kvguard.customresource;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The committed CRDs (crds/ and the chart's crds/) must be exactly what the build generates from
 * the Java classes.
 */
class CrdInSyncTest {
  private static final String FILE = "modeldeployments.kvguard.io-v1.yml";

  @Test
  void kubectlShowsThePrinterColumnsInContractOrder() throws IOException {
    com.fasterxml.jackson.databind.JsonNode crd =
        new com.fasterxml.jackson.databind.ObjectMapper(
                new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
            .readTree(Files.readString(Path.of("target/classes/META-INF/fabric8", FILE)));
    assertThat(crd.at("/spec/versions/0/additionalPrinterColumns").findValuesAsText("name"))
        .containsExactly("Model", "Window", "Verified", "Ready", "LabelOnly", "Age");
    assertThat(crd.at("/spec/names/shortNames").get(0).asText()).isEqualTo("mdep");
    assertThat(crd.at("/spec/versions/0/subresources/status").isObject()).isTrue();
  }

  @Test
  void committedCrdsMatchTheGeneratedOne() throws IOException {
    String generated = Files.readString(Path.of("target/classes/META-INF/fabric8", FILE));
    for (Path committed :
        List.of(Path.of("../crds", FILE), Path.of("../helm/kvguard/crds", FILE))) {
      assertThat(committed).exists();
      assertThat(Files.readString(committed))
          .as("%s is out of date: run `mvn -Pwrite-crds process-classes` and commit it", committed)
          .isEqualTo(generated);
    }
  }
}
