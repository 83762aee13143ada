package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.observe.Observer;
import io.kvguard.observe.PassReport;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;

/**
 * What kvguard keeps in memory per ModelDeployment, and the one place that forgets it (issue 28
 * §2). Passes record it as they go: the generation last seen (here), probe results, requests,
 * router proofs and tokens by policy ({@link ProbeBook}), the pods of the last pass and the
 * decision on each ({@link GateStage}), announced transitions and meters ({@link Observer}).
 *
 * <p>A policy's deletion pass forgets it ({@link #policyGone}), but that pass is JOSDK's to run,
 * and JOSDK loses it for a policy deleted during a pass that then fails (its status write answers
 * 404) when another event for the policy (a probe finishing, a pod event) came after the deletion:
 * in operator-framework/java-operator-sdk v5.2.3
 * (operator-framework-core/src/main/java/io/javaoperatorsdk/operator/processing/event/), {@code
 * EventProcessor.handleRetryOnException} calls {@code ResourceState.markEventReceived}, which turns
 * {@code ADDITIONAL_EVENT_PRESENT_AFTER_DELETE_EVENT} into {@code EVENT_PRESENT}, forgetting the
 * deletion; {@code submitReconciliationExecution} then runs nothing for a resource the cache no
 * longer holds and no deletion marks, and never will (still so on its main branch, late 2026). So
 * the stranded-pod recount, every {@link StrandedPods#RECOUNT}, also forgets every policy the
 * ModelDeployment cache no longer holds ({@link #forgetPoliciesNotCached}).
 *
 * <p>The order is what keeps a policy being created safe: a pass records its policy's UID first
 * ({@link #passStarting}), under the lock of its name, before anything else; JOSDK read that policy
 * from the cache just before. The sweep reads what is held first and only then asks the cache,
 * under the same lock: so a UID the sweep looks at was in the cache when its pass started, and the
 * cache not holding it now means it went, never that it has not arrived yet.
 */
final class PolicyMemory {
  private static final int STRIPES = 64;

  /**
   * The generation each policy's last pass saw: a new one re-probes its pods. Removed with the
   * policy.
   */
  private final Map<ResourceID, Long> generations = new ConcurrentHashMap<>();

  /**
   * The UID of the policy whose passes keep state under each name now (state is kept by name: a
   * policy recreated under its name takes it over, as its deletion pass would have left nothing).
   */
  private final ConcurrentMap<ResourceID, String> passing = new ConcurrentHashMap<>();

  private final Object[] stripes = new Object[STRIPES];
  private final ProbeBook probes;
  private final GateStage gates;
  private final Observer observer;

  PolicyMemory(ProbeBook probes, GateStage gates, Observer observer) {
    this.probes = probes;
    this.gates = gates;
    this.observer = observer;
    for (int i = 0; i < STRIPES; i++) {
      stripes[i] = new Object();
    }
  }

  private Object lockFor(ResourceID policy) {
    return stripes[Math.floorMod(policy.hashCode(), STRIPES)];
  }

  /**
   * The first thing a pass of a policy not being deleted does, before it keeps anything: records
   * the policy as live (waiting while the sweep forgets what an older policy of the same name left)
   * and returns the generation its last pass saw (null: none).
   */
  Long passStarting(ModelDeployment md) {
    ResourceID self = ResourceID.fromResource(md);
    synchronized (lockFor(self)) {
      passing.put(self, md.getMetadata().getUid());
    }
    observer.passStarting(md);
    long generation =
        md.getMetadata().getGeneration() == null ? 0 : md.getMetadata().getGeneration();
    return generations.put(self, generation);
  }

  /**
   * The policy's deletion pass handed its pods back: everything kept about it goes, and the pods it
   * could not hand back are said.
   */
  void policyGone(ModelDeployment md, List<PassReport.WriteFailure> handBackFailures) {
    ResourceID self = ResourceID.fromResource(md);
    synchronized (lockFor(self)) {
      forget(self);
      passing.remove(self, md.getMetadata().getUid());
    }
    observer.policyGone(md, handBackFailures);
  }

  /**
   * Forgets every policy something is kept for whose name the cache holds under no UID, or under
   * another UID than the one whose passes kept it (deleted and recreated), and anything a pass kept
   * after its policy was forgotten. Then the same for what the observer keeps by UID.
   *
   * @param cachedUid the UID the cache holds under a name, or null if none
   */
  void forgetPoliciesNotCached(Function<ResourceID, String> cachedUid) {
    // First what is held, then the cache (each policy under its lock): the order matters.
    for (ResourceID policy : held()) {
      synchronized (lockFor(policy)) {
        // No recorded UID: kept by a pass that overlapped its policy being forgotten.
        String recorded = passing.get(policy);
        String cached = cachedUid.apply(policy);
        if (cached == null || !cached.equals(recorded)) {
          forget(policy);
          passing.remove(policy);
        }
      }
    }
    observer.forgetPoliciesNotCached(
        (namespace, name) -> cachedUid.apply(new ResourceID(name, namespace)));
  }

  /** Called holding the policy's lock. */
  private void forget(ResourceID policy) {
    generations.remove(policy);
    probes.forgetAll(policy);
    gates.forget(policy);
  }

  private Set<ResourceID> held() {
    Set<ResourceID> held = new HashSet<>(passing.keySet());
    held.addAll(generations.keySet());
    held.addAll(probes.policies());
    held.addAll(gates.policies());
    return held;
  }

  /**
   * What is kept, per part, by policy name ("namespace/name") or, for the observer, UID: tests
   * check that nothing outlives its policy. Package-private for them: it reads every part.
   */
  Map<String, Set<String>> heldByPart() {
    Function<Set<ResourceID>, Set<String>> names =
        ids ->
            ids.stream()
                .map(id -> id.getNamespace().orElse("") + "/" + id.getName())
                .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
    Map<String, Set<String>> held = new TreeMap<>();
    held.put("generations", names.apply(generations.keySet()));
    held.put("passing", names.apply(passing.keySet()));
    held.put("probes", names.apply(probes.policies()));
    held.put("gates", names.apply(gates.policies()));
    held.put("observer (UIDs)", observer.uids());
    return held;
  }
}
