package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvguard.testing.LlamaServerAvailable;
import io.kvguard.testkit.LlamaServerRecorder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The llama.cpp answers the unit tests replay are still what the binary answers: recorded again,
 * every file comes back with the same status and the same figures the probes read. Fails when the
 * binary changes and the recordings were not renewed.
 */
@ExtendWith(LlamaServerAvailable.class)
class RecordedLlamaCppAnswersRealEngineIT {
  private static final Path RECORDED = Path.of("src/test/resources/engines/llamacpp-d14ce3d");
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void theRecordedAnswersAreWhatTheServerAnswersNow(@TempDir Path fresh) throws Exception {
    LlamaServerRecorder.recordInto(fresh, "d14ce3dab");

    List<Path> files = http(RECORDED);
    assertThat(files.stream().map(Path::getFileName).map(Path::toString))
        .containsExactlyInAnyOrderElementsOf(
            http(fresh).stream().map(Path::getFileName).map(Path::toString).toList());
    for (Path file : files) {
      String name = file.getFileName().toString();
      String[] before = Files.readString(file).split("\r\n\r\n", 2);
      String[] now = Files.readString(fresh.resolve(name)).split("\r\n\r\n", 2);
      assertThat(now[0]).as(name).isEqualTo(before[0]);
      if (name.startsWith("props-") && name.endsWith("-200.http")) {
        // The rest of /props names the model's temporary path and a random media marker.
        for (String pointer :
            List.of("/default_generation_settings/n_ctx", "/total_slots", "/build_info")) {
          assertThat(JSON.readTree(now[1]).at(pointer))
              .as(name + " " + pointer)
              .isEqualTo(JSON.readTree(before[1]).at(pointer));
        }
      } else if (name.startsWith("metrics-")) {
        assertThat(types(now[1])).as(name).isEqualTo(types(before[1]));
      } else {
        assertThat(now[1]).as(name).isEqualTo(before[1]);
      }
    }
  }

  private static List<Path> http(Path folder) throws IOException {
    try (Stream<Path> files = Files.list(folder)) {
      return files.filter(f -> f.toString().endsWith(".http")).sorted().toList();
    }
  }

  /** The metric names and types a Prometheus page declares; the values are counters that move. */
  private static List<String> types(String page) {
    return page.lines().filter(line -> line.startsWith("# TYPE")).toList();
  }
}
