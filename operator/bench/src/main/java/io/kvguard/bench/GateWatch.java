package io.kvguard.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kvguard.gate.GateNames;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * Watches the gate condition of every pod in one namespace, as a user with {@code kubectl get -w}
 * would: the current condition per pod, the number of status flips seen, and a callback on each
 * change.
 */
final class GateWatch implements AutoCloseable {
  /** The gate as last seen on one pod: status True/False and reason. */
  record Gate(String status, String reason) {
    boolean open() {
      return "True".equals(status);
    }

    /** {@code status} with {@code reason} (null: any reason). */
    boolean shows(String wantedStatus, String wantedReason) {
      return status.equals(wantedStatus) && (wantedReason == null || wantedReason.equals(reason));
    }
  }

  private final Map<String, Gate> gates = new ConcurrentHashMap<>();
  private final Set<String> labelled = ConcurrentHashMap.newKeySet();
  private final AtomicLong flips = new AtomicLong();
  private final AtomicLong changes = new AtomicLong();
  private volatile BiConsumer<String, Gate> onChange = (pod, gate) -> {};
  private final SharedIndexInformer<Pod> informer;

  GateWatch(KubernetesClient client, String namespace) {
    informer =
        client
            .pods()
            .inNamespace(namespace)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Pod pod) {
                    seen(pod);
                  }

                  @Override
                  public void onUpdate(Pod before, Pod after) {
                    seen(after);
                  }

                  @Override
                  public void onDelete(Pod pod, boolean unknownFinalState) {
                    gates.remove(pod.getMetadata().getName());
                    labelled.remove(pod.getMetadata().getName());
                  }
                });
  }

  private void seen(Pod pod) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    if (labels != null && "true".equals(labels.get(GateNames.VERIFIED_LABEL))) {
      labelled.add(pod.getMetadata().getName());
    } else {
      labelled.remove(pod.getMetadata().getName());
    }
    Gate now = gateOf(pod);
    if (now == null) {
      return;
    }
    String name = pod.getMetadata().getName();
    Gate before = gates.put(name, now);
    if (now.equals(before)) {
      return;
    }
    changes.incrementAndGet();
    if (before == null || before.open() != now.open()) {
      flips.incrementAndGet();
    }
    onChange.accept(name, now);
  }

  static Gate gateOf(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return null;
    }
    for (PodCondition condition : pod.getStatus().getConditions()) {
      if (GateNames.CONDITION_TYPE.equals(condition.getType())) {
        return new Gate(condition.getStatus(), condition.getReason());
      }
    }
    return null;
  }

  void onChange(BiConsumer<String, Gate> listener) {
    onChange = listener;
  }

  Gate gate(String pod) {
    return gates.get(pod);
  }

  /** Pods whose gate shows {@code status} with {@code reason} (null: any reason). */
  long count(String status, String reason) {
    return gates.values().stream().filter(g -> g.shows(status, reason)).count();
  }

  /**
   * Like {@link #count}, counting only pods that also carry the routing label: an open gate is
   * both.
   */
  long countLabelled(String status, String reason) {
    return gates.entrySet().stream()
        .filter(e -> labelled.contains(e.getKey()) && e.getValue().shows(status, reason))
        .count();
  }

  /** First settings and open/closed flips seen since the watch started. */
  long flips() {
    return flips.get();
  }

  /** Any change of status or reason. */
  long changes() {
    return changes.get();
  }

  @Override
  public void close() {
    informer.close();
  }
}
