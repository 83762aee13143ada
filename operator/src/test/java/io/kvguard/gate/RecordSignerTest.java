package io.kvguard.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * What a signature binds a record to: the key, the pod's UID, the policy's name and every field of
 * the record.
 */
class RecordSignerTest {
  private static final byte[] KEY = new byte[RecordSigner.KEY_BYTES];
  private static final RecordSigner SIGNER = RecordSigner.withKey(KEY);
  private static final Pod POD = pod("serve-0", "3f1c0d52-0000-4000-8000-000000000001");
  private static final VerdictRecord RECORD =
      new VerdictRecord(
          "serve",
          "Verified",
          "PoolSufficient",
          "containerd://abc",
          0,
          2_040_000L,
          null,
          1_048_576L,
          "0.5.22",
          null,
          "containerd://abc",
          1_048_577L,
          400,
          "ContextLengthExceeded",
          "2026-12-04T00:00:00Z");

  private static Pod pod(String name, String uid) {
    return new PodBuilder().withNewMetadata().withName(name).withUid(uid).endMetadata().build();
  }

  @Test
  void aSignedRecordVerifiesForItsPodAndPolicyOnly() {
    VerdictRecord signed = SIGNER.sign(POD, "glm", RECORD);
    assertThat(signed.sig()).isNotBlank();
    assertThat(signed.withSig(null)).isEqualTo(RECORD);
    assertThat(SIGNER.verifies(POD, "glm", signed)).isTrue();
    assertThat(SIGNER.trusted(POD, "glm", signed)).isEqualTo(signed);
    // Same name, new pod (another UID): not this pod's record.
    assertThat(
            SIGNER.verifies(pod("serve-0", "3f1c0d52-0000-4000-8000-000000000002"), "glm", signed))
        .isFalse();
    assertThat(SIGNER.verifies(POD, "other", signed)).isFalse();
    // Signing is deterministic: an unchanged record is the same text, so rewriting it is no write.
    assertThat(SIGNER.sign(POD, "glm", signed)).isEqualTo(signed);
  }

  @Test
  void anAlteredUnsignedOrForeignRecordDoesNotVerify() {
    VerdictRecord signed = SIGNER.sign(POD, "glm", RECORD);
    VerdictRecord altered =
        new VerdictRecord(
            "serve",
            "Verified",
            "PoolSufficient",
            "containerd://abc",
            0,
            4_000_000L,
            null,
            1_048_576L,
            "0.5.22",
            null,
            "containerd://abc",
            1_048_577L,
            400,
            "ContextLengthExceeded",
            "2026-12-04T00:00:00Z",
            signed.sig());
    assertThat(SIGNER.verifies(POD, "glm", altered)).isFalse();
    assertThat(SIGNER.verifies(POD, "glm", RECORD)).isFalse();
    assertThat(SIGNER.verifies(POD, "glm", RECORD.withSig("not base64 !"))).isFalse();
    assertThat(SIGNER.trusted(POD, "glm", RECORD)).isNull();
    byte[] otherKey = Arrays.copyOf(KEY, KEY.length);
    otherKey[0] = 1;
    assertThat(RecordSigner.withKey(otherKey).verifies(POD, "glm", signed))
        .as("after a key rotation")
        .isFalse();
    // The same thread, back to the first key: each signer uses its own key, whichever came last.
    assertThat(SIGNER.verifies(POD, "glm", signed)).isTrue();
    assertThat(RecordSigner.withKey(otherKey).sign(POD, "glm", RECORD).sig())
        .isNotEqualTo(signed.sig());
  }

  /**
   * Threads share an initialised Mac per key and clone it (the JDK looks a Mac up under one global
   * lock): two keys signing from many threads at once each still give their own signature, never
   * the other's.
   */
  @Test
  void signersWithTwoKeysOnManyThreadsAtOnceEachSignWithTheirOwnKey() throws Exception {
    byte[] otherKey = new byte[RecordSigner.KEY_BYTES];
    Arrays.fill(otherKey, (byte) 7);
    RecordSigner other = RecordSigner.withKey(otherKey);
    String mine = SIGNER.sign(POD, "glm", RECORD).sig();
    String theirs = other.sign(POD, "glm", RECORD).sig();
    assertThat(mine).isNotEqualTo(theirs);
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(8);
    try {
      java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
      java.util.List<java.util.concurrent.Future<java.util.List<String>>> results =
          new java.util.ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int thread = t;
        results.add(
            pool.submit(
                () -> {
                  go.await();
                  java.util.List<String> wrong = new java.util.ArrayList<>();
                  for (int i = 0; i < 500; i++) {
                    boolean first = (i + thread) % 2 == 0;
                    RecordSigner signer = first ? SIGNER : other;
                    String sig = signer.sign(POD, "glm", RECORD).sig();
                    if (!sig.equals(first ? mine : theirs)) {
                      wrong.add(thread + "/" + i);
                    }
                  }
                  return wrong;
                }));
      }
      go.countDown();
      for (java.util.concurrent.Future<java.util.List<String>> result : results) {
        assertThat(result.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEmpty();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void withoutAKeyNothingIsSignedAndNothingVerifies() {
    RecordSigner keyless = RecordSigner.keyless();
    assertThat(keyless.sign(POD, "glm", RECORD).sig()).isNull();
    assertThat(keyless.verifies(POD, "glm", SIGNER.sign(POD, "glm", RECORD))).isFalse();
    assertThat(keyless.toString()).doesNotContain("0");
    assertThatThrownBy(() -> RecordSigner.withKey(new byte[16]))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
