package io.kvguard;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kvguard.gate.RecordSigner;
import java.net.HttpURLConnection;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key that signs verdict records: {@value RecordSigner#KEY_BYTES} random bytes in a Secret in
 * the operator's own namespace, read at start and created when absent. Two replicas starting
 * together both try to create it; the loser's create answers 409 and it reads the winner's, so both
 * sign with one key. The key is never logged. Deleting the Secret rotates the key at the next
 * start: every record written under the old one counts as absent, and each pod is probed once more
 * (its gate stays as written meanwhile).
 */
final class VerdictKeySecret {
  private static final Logger LOG = LoggerFactory.getLogger(VerdictKeySecret.class);
  static final String DATA_KEY = "key";

  private VerdictKeySecret() {}

  /**
   * The signer with the key from {@code namespace/name}; keyless (nothing trusted) when it cannot
   * be had.
   */
  static RecordSigner load(KubernetesClient client, String namespace, String name) {
    try {
      Secret secret = client.secrets().inNamespace(namespace).withName(name).get();
      if (secret == null) {
        secret = create(client, namespace, name);
      }
      byte[] key = keyOf(secret);
      if (key == null) {
        LOG.warn(
            "Secret {}/{} holds no {}-byte base64 value under '{}': verdict records are not trusted, every pod"
                + " is probed after a restart; delete the Secret to have kvguard create a new key",
            namespace,
            name,
            RecordSigner.KEY_BYTES,
            DATA_KEY);
        return RecordSigner.keyless();
      }
      LOG.info("verdict records are signed with the key in Secret {}/{}", namespace, name);
      return RecordSigner.withKey(key);
    } catch (KubernetesClientException e) {
      LOG.warn(
          "cannot read or create the verdict key Secret {}/{} (HTTP {}): verdict records are not trusted, every"
              + " pod is probed after a restart; grant get and create on it (the chart's Role does)",
          namespace,
          name,
          e.getCode());
      return RecordSigner.keyless();
    }
  }

  private static Secret create(KubernetesClient client, String namespace, String name) {
    byte[] key = new byte[RecordSigner.KEY_BYTES];
    new SecureRandom().nextBytes(key);
    Secret fresh =
        new SecretBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(namespace)
            .withLabels(Map.of("app.kubernetes.io/managed-by", "kvguard"))
            .endMetadata()
            .withType("Opaque")
            .withData(Map.of(DATA_KEY, Base64.getEncoder().encodeToString(key)))
            .build();
    try {
      return client.secrets().inNamespace(namespace).resource(fresh).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
      // Another replica created it first: sign with its key.
      return client.secrets().inNamespace(namespace).withName(name).get();
    }
  }

  private static byte[] keyOf(Secret secret) {
    String encoded =
        secret == null || secret.getData() == null ? null : secret.getData().get(DATA_KEY);
    if (encoded == null) {
      return null;
    }
    try {
      byte[] key = Base64.getDecoder().decode(encoded.strip());
      return key.length == RecordSigner.KEY_BYTES ? key : null;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
