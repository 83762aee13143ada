package io.kvguard.verdict;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Engine builds known to be unsafe, as data: one entry per advisory, each with the engine, the
 * affected configuration and the first fixed release as verified in the engine's own tags (sources
 * in docs/engines.md, "Advisories"). An entry whose fixed release is verified refuses a pod whose
 * engine and disaggregation mode match and whose version is a release older than the fix; a pod
 * whose version is unknown cannot be cleared of it (see {@link PoolJudge}). An entry whose fixed
 * release is named by an outside account alone ({@link Fix.Claimed}) refuses the builds before it
 * too, but the release clears nothing: a pod at or after it, or of unknown version, stays shut
 * until a measurement of the path decides. An entry whose fixed release is not verified cannot say
 * which builds are safe: it never refuses, it warns ({@link #warnings}), and its message says so.
 * Advisories are on by default; {@code spec.engineAdvisories: Disabled} turns them off per
 * ModelDeployment.
 */
public final class EngineAdvisories {

  /** Which disaggregation modes an advisory concerns. */
  public enum Disaggregation {
    /** Every mode. */
    ANY,
    /**
     * Prefill or decode, or any mode other than unified the engine reports (an unrecognised one
     * included).
     */
    PREFILL_OR_DECODE,
    /** Unified serving only (the engine reports no disaggregation mode). */
    UNIFIED;

    boolean matches(String mode) {
      return switch (this) {
        case ANY -> true;
        case PREFILL_OR_DECODE -> mode != null;
        case UNIFIED -> mode == null;
      };
    }
  }

  /** What is known of the release that fixed the flaw. */
  public sealed interface Fix {
    // Verified: read in the engine's tags. Claimed: named by a post-mortem alone. Unverified: none.
    /** The first fixed release, found in the engine's own tags; {@code source} says where. */
    record Verified(EngineVersion release, String source) implements Fix {
      public Verified {
        if (!release.isRelease()) {
          throw new IllegalArgumentException(
              "a fixed release must be a release version, was " + release);
        }
      }
    }

    /**
     * No fixed release could be verified. {@code candidate} is a release the engine's own notes
     * name as fixed but whose tag could not be read (warnings stop at it), empty when nothing is
     * known to be fixed.
     */
    record Unverified(Optional<EngineVersion> candidate, String status) implements Fix {}

    /**
     * A release named as fixed by an outside account alone (a post-mortem), not found in the
     * engine's own tags: builds before it are refused, but reaching it clears nothing; a pod at or
     * after it (or of unknown version) stays shut ({@link PoolJudge}) until measured. {@code
     * source} says who named it; {@code proof} says what measurement can clear such a pod and what
     * the user can do until kvguard makes it.
     */
    record Claimed(EngineVersion release, String source, String proof) implements Fix {
      public Claimed {
        if (!release.isRelease()) {
          throw new IllegalArgumentException(
              "a claimed fixed release must be a release version, was " + release);
        }
      }
    }
  }

  /**
   * @param id a short name for the advisory (event messages, the metric's {@code advisory} label)
   * @param engine the engine's wire name, as in {@code spec.roles[].engine}
   * @param when the disaggregation modes affected (what kvguard can see of the configuration)
   * @param configuration the affected configuration in words, including what kvguard cannot see
   * @param fix the first fixed release, verified or not
   * @param reason the reason a refusal carries
   * @param message what is wrong and what to do, shown on the pod condition or in the warning
   */
  public record Advisory(
      String id,
      String engine,
      Disaggregation when,
      String configuration,
      Fix fix,
      GateReason reason,
      String message) {
    public Advisory {
      Objects.requireNonNull(id, "id");
      Objects.requireNonNull(engine, "engine");
      Objects.requireNonNull(when, "when");
      Objects.requireNonNull(configuration, "configuration");
      Objects.requireNonNull(fix, "fix");
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(message, "message");
    }

    /**
     * An advisory that refuses builds before {@code fixedIn} (a verified release) in the given
     * modes.
     */
    public Advisory(
        String engine,
        EngineVersion fixedIn,
        Disaggregation when,
        GateReason reason,
        String message) {
      this(
          engine + "-before-" + fixedIn,
          engine,
          when,
          when.name().toLowerCase(java.util.Locale.ROOT),
          new Fix.Verified(fixedIn, ""),
          reason,
          message);
    }

    /**
     * The advisory is about this engine in this mode; whether the version is affected is a separate
     * question.
     */
    public boolean concerns(String engineName, String disaggregationMode) {
      return engine.equals(engineName) && when.matches(disaggregationMode);
    }

    /** The verified first fixed release, empty for an advisory that only warns. */
    public Optional<EngineVersion> fixedIn() {
      if (fix instanceof Fix.Verified verified) {
        return Optional.of(verified.release());
      }
      return fix instanceof Fix.Claimed claimed ? Optional.of(claimed.release()) : Optional.empty();
    }

    /** Whether builds before the fixed release are refused (verified or claimed). */
    public boolean refuses() {
      return fix instanceof Fix.Verified || fix instanceof Fix.Claimed;
    }

    /**
     * Whether reaching the fixed release clears a pod of this advisory: only a verified one does.
     */
    public boolean clearsAtFix() {
      return fix instanceof Fix.Verified;
    }
  }

  /**
   * An advisory that applies to a pod but cannot refuse it; {@code message} says why it only warns.
   */
  public record Warning(Advisory advisory, String message) {}

  /**
   * The built-in advisories. Adding one is adding an entry; its sources go into docs/engines.md.
   */
  public static final List<Advisory> BUILT_IN =
      List.of(
          new Advisory(
              "sglang-pd-abort-before-0.5.22",
              "sglang",
              Disaggregation.PREFILL_OR_DECODE,
              "prefill/decode disaggregation",
              new Fix.Claimed(
                  EngineVersion.release("0.5.22"),
                  "named as fixed by the incident's post-mortem alone; no tag read carries the fix"
                      + " (bytedance-iaas/sglang tags end at v0.5.18, where the flawed abort is in place;"
                      + " the fix PR sgl-project/sglang #33508, for issue #33507, was open as last read)",
                  "the prefill/decode path that failed in the incident is reached only through the"
                      + " prefill/decode router, and this ModelDeployment names no router to probe"
                      + " through: set spec.rejectionProbe.router to the Service in front of the roles"
                      + " (with spec.rejectionProbe.enabled: true) and kvguard proves these pods through"
                      + " it, or test the route by hand with `kvguard check --engine sglang --url"
                      + " http://ROUTER --rejection-probe --pd-router`;"
                      + " to accept the risk knowingly, set spec.engineAdvisories: Disabled on this"
                      + " ModelDeployment (every advisory off for it, the refusal below 0.5.22 included),"
                      + " or spec.enforcement: Audit to open its gates while kvguard still reports this"
                      + " verdict"),
              GateReason.KnownUnsafeEngine,
              "SGLang before 0.5.22 with prefill/decode disaggregation mishandles over-long prompts: its abort swaps the"
                  + " prompt for a one-token placeholder and stores the error in to_finish while finished_reason stays"
                  + " empty, so the request runs on and decode reads KV pages still holding other requests' data (HTTP 200)."
                  + " Run SGLang 0.5.22 or later (named as fixed by the post-mortem only: sgl-project/sglang"
                  + " PR #33508, for issue #33507, is in no tag read, so kvguard keeps prefill/decode pods at"
                  + " 0.5.22 or later shut too, until their path is measured)"),
          new Advisory(
              "sglang-pd-admission-abort",
              "sglang",
              Disaggregation.PREFILL_OR_DECODE,
              "prefill/decode disaggregation; prompts the scheduler's admission check refuses (max_req_input_len ="
                  + " min(context, pool) - 6 tokens) that pass the tokenizer's context-length check",
              new Fix.Unverified(
                  Optional.empty(),
                  "fix pull requests sgl-project/sglang #33508 (for issue #33507), #30325, #34208 and"
                      + " #35421 were open in the last stored copies (#33508 as read 2026-08-04, the others"
                      + " September 2026); no release tag read contains a fix"),
              GateReason.KnownUnsafeEngine,
              "SGLang issues #30233 (0.5.11) and #32605: under prefill/decode disaggregation a prompt the scheduler's"
                  + " admission check refuses still enters the KV transfer with a one-token placeholder, and decode"
                  + " answers HTTP 200 from KV it never received, in some cases another request's. A prompt of up to 6"
                  + " tokens below the context length reaches it even where the context length is at most the pool;"
                  + " keep prompts from the router below the engine's max_req_input_len"),
          new Advisory(
              "trtllm-host-kv-cache-8813",
              "trtllm",
              Disaggregation.ANY,
              "host KV cache offload (kv_cache_config.host_cache_size > 0); kvguard cannot see whether it is on",
              new Fix.Unverified(
                  Optional.empty(),
                  "fixed on main by NVIDIA/TensorRT-LLM PR #9056 (merged 2025-12-02,"
                      + " main then bumped to 1.2.0rc6); the first release tag containing it could not be read"),
              GateReason.KnownUnsafeEngine,
              "TensorRT-LLM issue #8813 (1.2.0rc0, 1.2.0rc1): with the host KV cache enabled, outputs include tokens of"
                  + " other prompts (synchronization bugs in KvCacheTransferManager). If this engine offloads KV to host"
                  + " memory, run a build that contains PR #9056 or turn host_cache_size off"),
          kvbm("vllm"),
          kvbm("trtllm"),
          new Advisory(
              "vllm-prefix-cache-hash-GHSA-rm76-4mrf-v9r8",
              "vllm",
              Disaggregation.ANY,
              "automatic prefix caching on Python 3.12 or later (hash(None) is a constant there); kvguard cannot see"
                  + " either",
              new Fix.Unverified(
                  Optional.of(EngineVersion.release("0.7.2")),
                  "vLLM's v0.7.2 release notes list PR"
                      + " #12621 (\"Improve hash collision avoidance in prefix caching\") under Security Update; the v0.7.2"
                      + " tag itself could not be read"),
              GateReason.KnownUnsafeEngine,
              "vLLM advisory GHSA-rm76-4mrf-v9r8 (CVE-2025-25183): prefix-cache block hashes built with Python's"
                  + " hash() are predictable on Python 3.12, so a crafted prompt can make another request reuse KV"
                  + " computed from different content. Run vLLM 0.7.2 or later"));

  private static Advisory kvbm(String engine) {
    return new Advisory(
        "dynamo-kvbm-disk-onboard-15079",
        engine,
        Disaggregation.ANY,
        "NVIDIA Dynamo's KV block manager (KVBM, kvbm 1.4.2 reported) as the engine's KV connector with a disk tier"
            + " (DYN_KVBM_DISK_CACHE_GB); kvguard cannot see whether it is on",
        new Fix.Unverified(
            Optional.empty(),
            "ai-dynamo/dynamo issue #15079 was closed in September 2026 without a"
                + " release named as fixed"),
        GateReason.KnownUnsafeEngine,
        "ai-dynamo/dynamo issue #15079: when onboarding KV blocks from disk fails (for example without GDS), KVBM"
            + " marks the blocks loaded and the engine serves another request's KV with HTTP 200. If this engine"
            + " uses KVBM with a disk tier, turn the disk tier off or run a KVBM release that fixes it");
  }

  /**
   * The advisories that apply to this observation but only warn: those whose fixed release is not
   * verified, unless the engine reports a release at or after the candidate its notes name as
   * fixed.
   */
  public static List<Warning> warnings(VersionRules rules, PoolObservation seen) {
    List<Warning> warnings = new ArrayList<>();
    EngineVersion version =
        seen.engineVersion() == null ? null : EngineVersion.parse(seen.engineVersion());
    for (Advisory advisory : rules.concerning(seen.disaggregationMode())) {
      if (!(advisory.fix() instanceof Fix.Unverified unverified)) {
        continue;
      }
      Optional<EngineVersion> candidate = unverified.candidate();
      if (candidate.isPresent()
          && version != null
          && version.isRelease()
          && !version.isOlderThan(candidate.get())) {
        continue;
      }
      warnings.add(
          new Warning(
              advisory,
              advisory.message()
                  + ". Affected: "
                  + advisory.configuration()
                  + ". kvguard warns instead of refusing because no fixed release is verified in the engine's tags ("
                  + unverified.status()
                  + ")"));
    }
    return warnings;
  }

  private EngineAdvisories() {}
}
