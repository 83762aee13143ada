package io.kvguard.probe;

import io.kvguard.verdict.ProbeMarker;
import java.security.SecureRandom;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * The markers of the probe prompts this process sent recently (issue 26 §4), for every pod and
 * every ModelDeployment it probes: the last {@link #DEFAULT_CAPACITY}, in memory only. It holds
 * markers and nothing else: no pod, namespace or answer, so a finding can say that another probe's
 * marker came back without saying whose.
 */
public final class SentMarkers {
  /**
   * About 35 bytes a marker (a boxed long and its map entry twice over): some 300 KiB at most. A
   * probe sends one to three prompts per engine container start; 4,096 covers the prompts of a
   * thousand-pod restart, so a leak between any two of them is seen.
   */
  public static final int DEFAULT_CAPACITY = 4096;

  private final int capacity;
  private final RandomGenerator random;
  private final Map<Long, ProbeMarker> recent;

  public SentMarkers() {
    this(DEFAULT_CAPACITY, new SecureRandom());
  }

  /** With a given capacity and source of nonces (tests). */
  public SentMarkers(int capacity, RandomGenerator random) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
    }
    this.capacity = capacity;
    this.random = random;
    // Insertion order: the eldest is the marker sent longest ago.
    this.recent =
        new LinkedHashMap<>() {
          @Override
          protected boolean removeEldestEntry(Map.Entry<Long, ProbeMarker> eldest) {
            return size() > SentMarkers.this.capacity;
          }
        };
  }

  /**
   * A marker for a prompt about to be sent, unlike every marker held, and held from now on. Drawn
   * from a cryptographic source: an engine or a tenant that cannot predict the next marker cannot
   * plant it in an answer.
   */
  public synchronized ProbeMarker next() {
    ProbeMarker marker = ProbeMarker.drawn(random);
    while (recent.containsKey(marker.code())) {
      marker = ProbeMarker.drawn(random);
    }
    recent.put(marker.code(), marker);
    return marker;
  }

  /** The markers held, eldest first. */
  public synchronized List<ProbeMarker> recent() {
    return List.copyOf(recent.values());
  }
}
