package io.kvguard.customresource;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The committed CRDs (crds/ and the chart's crds/) must be exactly what the build generates from the Java classes. */
class CrdInSyncTest {
  private static final String FILE = "modeldeployments.kvguard.io-v1.yml";

  @Test
  void committedCrdsMatchTheGeneratedOne() throws IOException {
    String generated = Files.readString(Path.of("target/classes/META-INF/fabric8", FILE));
    for (Path committed : List.of(Path.of("../crds", FILE), Path.of("../helm/kvguard/crds", FILE))) {
      assertThat(committed).exists();
      assertThat(Files.readString(committed))
          .as("%s is out of date: run `mvn -Pwrite-crds process-classes` and commit it", committed)
          .isEqualTo(generated);
    }
  }
}
