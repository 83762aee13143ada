package io.kvguard.webhook;

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
 * namespace's ModelDeployments (memory only, never the network), answers, counts and times. The
 * body is read by {@link AdmissionReviewReader}, which keeps only what the decision needs. Whatever
 * goes wrong, the answer allows the pod without a patch and {@code
 * kvguard_webhook_admissions_total{outcome="error"}} counts it: the pod is then label-gated only,
 * which the reconciler reports.
 */
public final class AdmissionHandler implements Function<byte[], byte[]> {
  private static final Logger LOG = LoggerFactory.getLogger(AdmissionHandler.class);

  /** Prometheus names (public API). */
  public static final String ADMISSIONS_TOTAL = "kvguard_webhook_admissions_total";

  public static final String LABELS_STRIPPED_TOTAL = "kvguard_webhook_labels_stripped_total";

  public static final String ADMISSION_DURATION_SECONDS =
      "kvguard_webhook_admission_duration_seconds";

  private final Function<String, List<ModelDeployment>> policiesOfNamespace;
  private final Map<GateInjection.Outcome, Counter> admissions =
      new EnumMap<>(GateInjection.Outcome.class);
  private final Map<String, Counter> labelsStripped = new java.util.HashMap<>();
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
    for (String label : GateInjection.KVGUARD_LABELS) {
      labelsStripped.put(
          label,
          Counter.builder("kvguard.webhook.labels.stripped")
              .description(
                  "kvguard's own labels the webhook removed from pods at creation, by label: only"
                      + " kvguard may write them")
              .tag("label", label)
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
    String uid = "";
    try {
      PodAdmission review = AdmissionReviewReader.read(body);
      uid = review.uid();
      String namespace = review.namespace();
      List<ModelDeployment> policies =
          namespace.isEmpty() ? List.of() : policiesOfNamespace.apply(namespace);
      GateInjection.Decision decision = GateInjection.decide(review, policies);
      admissions.get(decision.outcome()).increment();
      decision.labelsStripped().forEach(label -> labelsStripped.get(label).increment());
      if (decision.outcome() == GateInjection.Outcome.injected) {
        LOG.debug(
            "readiness gate injected namespace={} pod={} modelDeployments={}",
            namespace,
            podName(review),
            decision.selectedBy());
      } else if (decision.outcome() == GateInjection.Outcome.error) {
        LOG.warn(
            "webhook could not decide, pod allowed without the readiness gate namespace={} pod={}"
                + " error=more than {} labels labelsStripped={}",
            namespace,
            podName(review),
            AdmissionReviewReader.MAX_LABELS,
            decision.labelsStripped());
      }
      return GateInjection.JSON.writeValueAsBytes(GateInjection.answer(decision));
    } catch (AdmissionReviewReader.UnreadableReview e) {
      return allowing(e.uid(), e.toString());
    } catch (Exception e) {
      return allowing(uid, e.toString());
    } finally {
      duration.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
    }
  }

  /** Allowed without a patch, under the request's uid where it was read. */
  private byte[] allowing(String uid, String error) {
    admissions.get(GateInjection.Outcome.error).increment();
    LOG.warn("webhook could not decide, pod allowed without the readiness gate error={}", error);
    try {
      return GateInjection.JSON.writeValueAsBytes(GateInjection.answerAllowing(uid));
    } catch (Exception unwritable) {
      return ("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"\","
              + "\"allowed\":true}}")
          .getBytes(StandardCharsets.UTF_8);
    }
  }

  private static String podName(PodAdmission review) {
    PodAdmission.Pod pod = review.pod();
    if (pod == null) {
      return "*";
    }
    return pod.name().isEmpty() ? pod.generateName() + "*" : pod.name();
  }
}
