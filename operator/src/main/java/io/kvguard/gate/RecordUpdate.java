package io.kvguard.gate;

/**
 * What a write does to one ModelDeployment's {@link VerdictRecord} on a pod: puts {@code record},
 * or removes the policy's entry when {@code record} is null (the policy let go of the pod). {@code
 * publishContextLength}: the policy manages the {@link GateNames#CONTEXT_LENGTH_LABEL}
 * (spec.routing.publishContextLengthLabel); when false kvguard leaves that label as it finds it (it
 * may be set by hand).
 */
public record RecordUpdate(
    String modelDeployment, VerdictRecord record, boolean publishContextLength) {

  public RecordUpdate(String modelDeployment, VerdictRecord record) {
    this(modelDeployment, record, false);
  }

  public static RecordUpdate remove(String modelDeployment) {
    return remove(modelDeployment, false);
  }

  /**
   * The policy lets go of the pod; a policy that published the context-length label takes it away.
   */
  public static RecordUpdate remove(String modelDeployment, boolean publishContextLength) {
    return new RecordUpdate(modelDeployment, null, publishContextLength);
  }
}
