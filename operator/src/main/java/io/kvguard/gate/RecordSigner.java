package io.kvguard.gate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signs the verdict records kvguard writes and tells its own from anyone else's. The annotation is
 * pod metadata, which every tenant who may patch the pod can write; the signature is an HMAC-SHA256
 * under a key only the operator holds, over the pod's UID, the ModelDeployment's name (the record's
 * key in the annotation) and the record's JSON without {@code sig}. So a record typed by hand,
 * altered, moved to another policy's key or copied from another pod (another UID) does not verify,
 * and counts as absent: the pod is probed (fail closed). Without a key nothing verifies.
 */
public final class RecordSigner {
  private static final String ALGORITHM = "HmacSHA256";
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** The key's length in bytes (HMAC-SHA256's block of output: shorter keys would weaken it). */
  public static final int KEY_BYTES = 32;

  /**
   * Null until the key arrives: a replica that could not read its key at start keeps asking (see
   * {@code VerdictKeySecret}) and is given it here once, without a restart.
   */
  private volatile SecretKeySpec key;

  private RecordSigner(byte[] key) {
    this.key = key == null ? null : new SecretKeySpec(key, ALGORITHM);
  }

  /**
   * Gives a keyless signer its key; from then on it signs and verifies. False (and nothing changes)
   * when it already holds one: a key never changes under a running signer.
   */
  public synchronized boolean install(byte[] arrived) {
    if (arrived == null || arrived.length != KEY_BYTES) {
      throw new IllegalArgumentException("a verdict key is " + KEY_BYTES + " bytes");
    }
    if (key != null) {
      return false;
    }
    key = new SecretKeySpec(arrived.clone(), ALGORITHM);
    return true;
  }

  /** Signs and verifies with these {@value #KEY_BYTES} bytes. */
  public static RecordSigner withKey(byte[] key) {
    if (key == null || key.length != KEY_BYTES) {
      throw new IllegalArgumentException("a verdict key is " + KEY_BYTES + " bytes");
    }
    return new RecordSigner(key.clone());
  }

  /** No key: records are written unsigned and none is trusted. */
  public static RecordSigner keyless() {
    return new RecordSigner(null);
  }

  public boolean hasKey() {
    return key != null;
  }

  /**
   * The record as written on {@code pod} for {@code modelDeployment}: signed (unsigned without a
   * key).
   */
  public VerdictRecord sign(Pod pod, String modelDeployment, VerdictRecord record) {
    if (record == null) {
      return null;
    }
    VerdictRecord unsigned = record.withSig(null);
    SecretKeySpec current = key;
    return current == null
        ? unsigned
        : unsigned.withSig(
            signature(current, pod.getMetadata().getUid(), modelDeployment, unsigned));
  }

  /** Whether {@code record} was signed by this key for this pod and ModelDeployment. */
  public boolean verifies(Pod pod, String modelDeployment, VerdictRecord record) {
    SecretKeySpec current = key;
    if (current == null
        || record == null
        || record.sig() == null
        || pod.getMetadata().getUid() == null) {
      return false;
    }
    byte[] given;
    try {
      given = Base64.getUrlDecoder().decode(record.sig());
    } catch (IllegalArgumentException e) {
      return false;
    }
    byte[] wanted =
        Base64.getUrlDecoder()
            .decode(
                signature(
                    current, pod.getMetadata().getUid(), modelDeployment, record.withSig(null)));
    return MessageDigest.isEqual(given, wanted);
  }

  /**
   * {@code record} when it verifies, else null (a record that is not the operator's counts as
   * none).
   */
  public VerdictRecord trusted(Pod pod, String modelDeployment, VerdictRecord record) {
    return verifies(pod, modelDeployment, record) ? record : null;
  }

  private static String signature(
      SecretKeySpec key, String podUid, String modelDeployment, VerdictRecord unsigned) {
    String json;
    try {
      json = MAPPER.writeValueAsString(unsigned);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise a verdict record", e);
    }
    // Newline-separated: neither a UID nor a ModelDeployment name (a DNS subdomain) can hold one.
    byte[] message =
        (podUid + "\n" + modelDeployment + "\n" + json).getBytes(StandardCharsets.UTF_8);
    try {
      return Base64.getUrlEncoder().withoutPadding().encodeToString(mac(key).doFinal(message));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 unavailable", e);
    }
  }

  /** A thread's Mac, initialised with the key it last signed or verified with. */
  private record KeyedMac(SecretKeySpec key, Mac mac) {}

  /**
   * Each pass signs or verifies a record per pod: looking the algorithm up and initialising a Mac
   * each time was a quarter of that (issue 28 §5). {@code doFinal} leaves a Mac as {@code init}
   * left it (javax.crypto.Mac), so a thread reuses its own while the key is the same.
   */
  private static final ThreadLocal<KeyedMac> MACS = new ThreadLocal<>();

  private static Mac mac(SecretKeySpec key) throws GeneralSecurityException {
    KeyedMac held = MACS.get();
    if (held == null || held.key() != key) {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      held = new KeyedMac(key, mac);
      MACS.set(held);
    }
    return held.mac();
  }

  @Override
  public String toString() {
    // Never the key.
    return key == null ? "RecordSigner[no key]" : "RecordSigner[key set]";
  }
}
