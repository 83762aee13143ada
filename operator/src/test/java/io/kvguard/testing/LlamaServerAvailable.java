package io.kvguard.testing;

import io.kvguard.testkit.LlamaServer;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs the *RealEngineIT tests only where a llama-server binary is named, and otherwise reports
 * them skipped with the reason, so a build without one says what it did not test. A name that is
 * set but does not run is a failure, never a skip: the launcher says why it could not start.
 */
public final class LlamaServerAvailable implements ExecutionCondition {
  static final String NOT_SET =
      LlamaServer.BINARY_VARIABLE
          + " is not set: these tests start a real llama.cpp llama-server; set it to the binary's"
          + " path (docs/e2e.md, \"A real engine\")";

  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    return LlamaServer.binary()
        .map(binary -> ConditionEvaluationResult.enabled("llama-server " + binary))
        .orElseGet(() -> ConditionEvaluationResult.disabled(NOT_SET));
  }
}
