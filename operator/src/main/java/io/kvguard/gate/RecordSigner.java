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

  /**
   * The Mac every thread's is cloned from, initialised once per key: a new thread neither looks the
   * algorithm up nor initialises a Mac. A clone is a copy of the initialised state, and cloning
   * writes only the copy (JDK 17.0.15+6: {@code javax.crypto.Mac.clone} copies the Mac and clones
   * its spi; {@code com.sun.crypto.provider.HmacCore.clone} clones its MessageDigest and pads,
   * {@code sun.security.provider.DigestBase.clone} and {@code SHA2.clone} their buffer and state);
   * the prototype itself never signs, so many threads clone it at once safely.
   *
   * <p>Not a JDK-wide lock avoided: in JDK 17.0.15 {@code javax.crypto.JceSecurity
   * .getVerificationResult} is not {@code synchronized} (a ConcurrentHashMap since JDK-8168469,
   * openjdk/jdk17u-dev pull 1671). 50 threads calling {@code Mac.getInstance} at once wait only on
   * {@code sun.security.jca.ProviderConfig.getProvider}'s monitor while the provider is first
   * loaded, and on none once it is (JFR, jdk.JavaMonitorEnter at 0 ms); threads that arrive
   * together before a prototype exists each still look the algorithm up.
   */
  private static volatile KeyedMac prototype;

  private static Mac mac(SecretKeySpec key) throws GeneralSecurityException {
    KeyedMac held = MACS.get();
    if (held == null || held.key() != key) {
      held = new KeyedMac(key, cloneOf(key, prototypeFor(key)));
      MACS.set(held);
    }
    return held.mac();
  }

  private static Mac prototypeFor(SecretKeySpec key) throws GeneralSecurityException {
    KeyedMac current = prototype;
    if (current == null || current.key() != key) {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      current = new KeyedMac(key, mac);
      prototype = current;
    }
    return current.mac();
  }

  private static Mac cloneOf(SecretKeySpec key, Mac prototype) throws GeneralSecurityException {
    try {
      return (Mac) prototype.clone();
    } catch (CloneNotSupportedException e) {
      // A provider whose Mac cannot be cloned: a thread's own, looked up as before.
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      return mac;
    }
  }

  @Override
  public String toString() {
    // Never the key.
    return key == null ? "RecordSigner[no key]" : "RecordSigner[key set]";
  }
}
