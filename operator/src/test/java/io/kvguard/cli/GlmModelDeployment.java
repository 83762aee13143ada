package io.kvguard.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The ModelDeployment the {@code --model-deployment} tests hand to {@code kvguard check}. */
final class GlmModelDeployment {
  private GlmModelDeployment() {}

  /**
   * Writes to {@code file} a ModelDeployment named glm in {@code namespace}, serving
   * zai-org/GLM-5.3 with a 1,048,576-token window, followed by {@code restOfSpec} (written as at
   * the top level of the spec).
   */
  static Path write(Path file, String namespace, String restOfSpec) throws IOException {
    Files.writeString(
        file,
        """
        apiVersion: kvguard.io/v1alpha1
        kind: ModelDeployment
        metadata: {name: glm, namespace: %s}
        spec:
          model: zai-org/GLM-5.3
          contextWindow: 1048576
        %s"""
            .formatted(namespace, restOfSpec.indent(2)));
    return file;
  }
}
