package io.kvguard.probe;

import java.util.Optional;
import java.util.Set;

/**
 * sgl-model-gateway's own error envelope, {@code {"error": {"type": T, "code": C, "message": M}}}
 * and nothing else, read strictly (a key twice is no envelope): sgl-project/sglang v0.5.18 (through
 * bytedance-iaas/sglang), {@code sgl-model-gateway/src/routers/error.rs:9-21,55-81}. What each code
 * means is for its reader: {@link RouterWorkerError}, {@link RouterSelectionFailure}, {@link
 * RouterFoldedDecodeError}.
 */
record RouterErrorBody(String type, String code, String message) {
  private static final Set<String> FIELDS = Set.of("type", "code", "message");

  /** The envelope of {@code response}, when its body is exactly one; else empty. */
  static Optional<RouterErrorBody> read(EngineResponse response) {
    return ErrorBodies.strictObject(response)
        .filter(body -> ErrorBodies.hasExactly(body, Set.of("error")))
        .flatMap(body -> ErrorBodies.child(body, "error"))
        .filter(e -> ErrorBodies.hasExactly(e, FIELDS))
        .map(
            e ->
                new RouterErrorBody(
                    ErrorBodies.text(e, "type").orElse(""),
                    ErrorBodies.text(e, "code").orElse(""),
                    ErrorBodies.text(e, "message").orElse("")));
  }
}
