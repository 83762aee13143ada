package io.kvguard.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.customresource.ModelDeployment;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shell around {@link GateInjection}: reads the body, asks the informer cache for the
 * namespace's ModelDeployments (memory only, never the network), answers, counts and times.
 * Whatever goes wrong, the answer allows the pod without a patch and {@code
 * kvguard_webhook_admissions_total{outcome="error"}} counts it: the pod is then label-gated only,
 * which the reconciler reports.
 */
public final class AdmissionHandler implements Function<byte[], byte[]> {
  private static final Logger LOG = LoggerFactory.getLogger(AdmissionHandler.class);

  /** Prometheus names (public API). */
  public static final String ADMISSIONS_TOTAL = "kvguard_webhook_admissions_total";

  public static final String ADMISSION_DURATION_SECONDS =
      "kvguard_webhook_admission_duration_seconds";

  private final Function<String, List<ModelDeployment>> policiesOfNamespace;
  private final Map<GateInjection.Outcome, Counter> admissions =
      new EnumMap<>(GateInjection.Outcome.class);
  private final Timer duration;

  public AdmissionHandler(
      Function<String, List<ModelDeployment>> policiesOfNamespace, MeterRegistry registry) {
    this.policiesOfNamespace = policiesOfNamespace;
    for (GateInjection.Outcome outcome : GateInjection.Outcome.values()) {
      admissions.put(
          outcome,
          Counter.builder("kvguard.webhook.admissions")
              .description(
                  "Pod admissions the readiness-gate webhook answered, by outcome; every one was allowed")
              .tag("outcome", outcome.name())
              .register(registry));
    }
    duration =
        Timer.builder("kvguard.webhook.admission.duration")
            .description(
                "Time the readiness-gate webhook took to answer an admission, from its body to its answer")
            .publishPercentiles(0.5, 0.99)
            .register(registry);
  }

  @Override
  public byte[] apply(byte[] body) {
    long start = System.nanoTime();
    JsonNode review = null;
    try {
      review = GateInjection.JSON.readTree(body);
      String namespace = GateInjection.namespace(review);
      List<ModelDeployment> policies =
          namespace.isEmpty() ? List.of() : policiesOfNamespace.apply(namespace);
      GateInjection.Decision decision = GateInjection.decide(review, policies);
      admissions.get(decision.outcome()).increment();
      if (decision.outcome() == GateInjection.Outcome.injected) {
        LOG.debug(
            "readiness gate injected namespace={} pod={} modelDeployments={}",
            namespace,
            podName(review),
            decision.selectedBy());
      }
      return GateInjection.JSON.writeValueAsBytes(GateInjection.answer(decision));
    } catch (Exception e) {
      admissions.get(GateInjection.Outcome.error).increment();
      LOG.warn(
          "webhook could not decide, pod allowed without the readiness gate error={}",
          e.toString());
      try {
        return GateInjection.JSON.writeValueAsBytes(GateInjection.answerAllowing(review));
      } catch (Exception unwritable) {
        return ("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"\","
                + "\"allowed\":true}}")
            .getBytes(StandardCharsets.UTF_8);
      }
    } finally {
      duration.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
    }
  }

  private static String podName(JsonNode review) {
    JsonNode metadata = review.path("request").path("object").path("metadata");
    String name = metadata.path("name").asText("");
    return name.isEmpty() ? metadata.path("generateName").asText("") + "*" : name;
  }
}
