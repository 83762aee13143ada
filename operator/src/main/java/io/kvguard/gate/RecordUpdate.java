package io.kvguard.gate;

/**
 * What a write does to one ModelDeployment's {@link VerdictRecord} on a pod: puts {@code record}, or removes the
 * policy's entry when {@code record} is null (the policy let go of the pod).
 */
public record RecordUpdate(String modelDeployment, VerdictRecord record) {

  public static RecordUpdate remove(String modelDeployment) {
    return new RecordUpdate(modelDeployment, null);
  }
}
