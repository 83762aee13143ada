package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kvguard.customresource.CaBundleRef;
import io.kvguard.customresource.ProbeTlsSpec;
import io.kvguard.probe.EngineTls;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The TLS settings of a ModelDeployment's probes (spec.probe.tls), the CA bundle read from its
 * Secret or ConfigMap with the same short cache as {@link ProbeCredentials} (one GET per object per
 * minute, not per probe). A bundle that cannot be read fails the probe: never a fallback to the
 * JVM's trust store or to no verification.
 */
public final class ProbeTrust {
  private static final Duration TTL = Duration.ofSeconds(60);

  /** The settings, or why there are none (safe to show). Empty settings: probe.tls is not set. */
  record Lookup(Optional<EngineTls> tls, String problem) {}

  private record Bundle(String pem, String problem) {}

  private record Cached(Bundle bundle, Instant readAt) {}

  private final KubernetesClient client;
  private final Clock clock;
  private final Map<String, Cached> cache = new ConcurrentHashMap<>();

  public ProbeTrust(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  Lookup settings(String namespace, ProbeTlsSpec spec) {
    if (spec == null) {
      return new Lookup(Optional.empty(), null);
    }
    String pem = null;
    String source = null;
    if (spec.getCaSecretRef() != null || spec.getCaConfigMapRef() != null) {
      boolean secret = spec.getCaSecretRef() != null;
      CaBundleRef ref = secret ? spec.getCaSecretRef() : spec.getCaConfigMapRef();
      source =
          (secret ? "Secret " : "ConfigMap ")
              + namespace
              + "/"
              + ref.getName()
              + " key "
              + ref.effectiveKey();
      Bundle bundle = bundle(namespace, ref, secret, source);
      if (bundle.problem() != null) {
        return new Lookup(Optional.empty(), bundle.problem());
      }
      pem = bundle.pem();
    }
    return new Lookup(Optional.of(EngineTls.of(pem, source, spec.getServerName())), null);
  }

  private Bundle bundle(String namespace, CaBundleRef ref, boolean secret, String source) {
    String cacheKey =
        (secret ? "secret/" : "configmap/")
            + namespace
            + "/"
            + ref.getName()
            + "/"
            + ref.effectiveKey();
    Instant now = clock.instant();
    Cached cached = cache.get(cacheKey);
    if (cached != null && cached.readAt.plus(TTL).isAfter(now)) {
      return cached.bundle;
    }
    Bundle bundle =
        secret ? fromSecret(namespace, ref, source) : fromConfigMap(namespace, ref, source);
    cache.put(cacheKey, new Cached(bundle, now));
    return bundle;
  }

  private Bundle fromSecret(String namespace, CaBundleRef ref, String source) {
    Secret secret;
    try {
      secret = client.secrets().inNamespace(namespace).withName(ref.getName()).get();
    } catch (KubernetesClientException e) {
      return new Bundle(null, "cannot read " + source + " (HTTP " + e.getCode() + ")");
    }
    if (secret == null) {
      return new Bundle(null, source + " does not exist");
    }
    String encoded = secret.getData() == null ? null : secret.getData().get(ref.effectiveKey());
    if (encoded != null) {
      try {
        return nonEmpty(
            new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8), source);
      } catch (IllegalArgumentException e) {
        return new Bundle(null, source + " is not valid base64");
      }
    }
    return nonEmpty(
        secret.getStringData() == null ? null : secret.getStringData().get(ref.effectiveKey()),
        source);
  }

  private Bundle fromConfigMap(String namespace, CaBundleRef ref, String source) {
    ConfigMap configMap;
    try {
      configMap = client.configMaps().inNamespace(namespace).withName(ref.getName()).get();
    } catch (KubernetesClientException e) {
      return new Bundle(null, "cannot read " + source + " (HTTP " + e.getCode() + ")");
    }
    if (configMap == null) {
      return new Bundle(null, source + " does not exist");
    }
    String text = configMap.getData() == null ? null : configMap.getData().get(ref.effectiveKey());
    if (text == null
        && configMap.getBinaryData() != null
        && configMap.getBinaryData().get(ref.effectiveKey()) != null) {
      try {
        text =
            new String(
                Base64.getDecoder().decode(configMap.getBinaryData().get(ref.effectiveKey())),
                StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        return new Bundle(null, source + " is not valid base64");
      }
    }
    return nonEmpty(text, source);
  }

  private static Bundle nonEmpty(String pem, String source) {
    return pem == null || pem.isBlank()
        ? new Bundle(null, source + " is missing or empty")
        : new Bundle(pem, null);
  }
}
