package io.kvguard.cli;

import io.kvguard.probe.EngineEndpoint;
import io.kvguard.probe.RouterWorkers;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import java.net.URI;
import java.util.List;

/**
 * What became of one worker of {@code --register-prefill} or {@code --register-decode}: its pool
 * check, its registration on the proof router and its removal, as {@code check} reports them.
 *
 * @param observation what its pool probe saw, or null when the probe failed
 * @param workerId the ID the router gave it, or null when none was given
 * @param registration "not sent", "registered", "refused", "pending" (the router had not finished
 *     adding it when the proof stopped waiting) or "already on the router" (a worker this run did
 *     not add, at its URL)
 * @param registrationProblem why it was refused or is already there, else null
 * @param removal "none" (nothing to remove), "removed", "not removed" or "left alone" (not this
 *     run's worker)
 * @param removalProblem why it was not removed, else null
 */
record RegisteredWorker(
    Named named,
    PoolVerdict pool,
    PoolObservation observation,
    String workerId,
    String registration,
    String registrationProblem,
    String removal,
    String removalProblem) {

  /** A worker as named on the command line. */
  record Named(String type, URI url) {
    String flag() {
      return "--register-" + type;
    }
  }

  /** One worker while the check runs: filled in by its pool probe and by {@link Journal}. */
  static final class Entry {
    private final Named named;
    private final EngineEndpoint endpoint;
    private final ProbeOutcome outcome;
    private final PoolVerdict pool;
    private String workerId;
    private String registration = "not sent";
    private String registrationProblem;
    private String removal;
    private String removalProblem;

    Entry(Named named, EngineEndpoint endpoint, ProbeOutcome outcome, PoolVerdict pool) {
      this.named = named;
      this.endpoint = endpoint;
      this.outcome = outcome;
      this.pool = pool;
    }

    Named named() {
      return named;
    }

    EngineEndpoint endpoint() {
      return endpoint;
    }

    PoolVerdict pool() {
      return pool;
    }

    PoolObservation observation() {
      return outcome instanceof ProbeOutcome.Observed observed ? observed.observation() : null;
    }

    RegisteredWorker report() {
      String removed = removal;
      if (removed == null) {
        // An ID the router gave is removed in every case; one neither removed nor reported as not
        // removed was not tried.
        removed = workerId == null ? "none" : "not removed";
      }
      return new RegisteredWorker(
          named,
          pool,
          observation(),
          workerId,
          registration.equals("accepted") ? "pending" : registration,
          registrationProblem,
          removed,
          removalProblem);
    }
  }

  /**
   * Tells each entry what {@link RouterWorkers} did with its worker, matched by the URL the router
   * was given and then by the worker ID it handed out.
   */
  static final class Journal implements RouterWorkers.Journal {
    private final List<Entry> entries;

    Journal(List<Entry> entries) {
      this.entries = entries;
    }

    private Entry of(RouterWorkers.Wanted wanted) {
      return entries.stream()
          .filter(e -> e.endpoint.baseUri().toString().equals(wanted.url()))
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no worker at " + wanted.url()));
    }

    private Entry byId(String id) {
      return entries.stream().filter(e -> id.equals(e.workerId)).findFirst().orElse(null);
    }

    @Override
    public void accepted(RouterWorkers.Wanted wanted, String id) {
      Entry entry = of(wanted);
      entry.workerId = id;
      entry.registration = "accepted";
    }

    @Override
    public void registered(RouterWorkers.Wanted wanted, String id) {
      of(wanted).registration = "registered";
    }

    @Override
    public void refused(RouterWorkers.Wanted wanted, String problem) {
      Entry entry = of(wanted);
      entry.registration = "refused";
      entry.registrationProblem = problem;
    }

    @Override
    public void leftAlone(RouterWorkers.Wanted wanted, String id, String problem) {
      Entry entry = of(wanted);
      entry.workerId = id;
      entry.registration = "already on the router";
      entry.registrationProblem = problem;
      entry.removal = "left alone";
    }

    @Override
    public void removed(String id) {
      Entry entry = byId(id);
      if (entry != null && entry.removal == null) {
        entry.removal = "removed";
      }
    }

    @Override
    public void notRemoved(String id, String problem) {
      Entry entry = byId(id);
      if (entry != null && entry.removal == null) {
        entry.removal = "not removed";
        entry.removalProblem = problem;
      }
    }
  }
}
