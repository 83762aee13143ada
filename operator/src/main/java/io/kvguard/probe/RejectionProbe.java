package io.kvguard.probe;

import io.kvguard.verdict.AdmissionPlan;
import io.kvguard.verdict.MarkerFinding;
import io.kvguard.verdict.MarkerScan;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeMarker;
import io.kvguard.verdict.ProbePrompt;
import io.kvguard.verdict.RejectionOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Sends one prompt per admission path of the engine ({@link EngineRejection#paths}; issue 26) and
 * reports what the engine did. Only the engine's own admission refusal, as its {@link
 * EngineRejection} recognises it, and from the check each prompt was sized for, counts as a
 * refusal; any other 4xx is inconclusive. The gate may open only when every prompt was refused. The
 * body of an answer is hashed as it arrives and only its head is looked at: it may carry another
 * tenant's data, so it is never logged or kept. Each prompt starts with a marker unique to it
 * ({@link SentMarkers}); an answer where a refusal was due is scanned once for the markers of other
 * prompts (evidence of another request's KV), and only the finding is kept. The prompt is produced
 * while it is sent and never built in memory, and it is capped.
 */
public final class RejectionProbe {
  /**
   * Largest prompt sent (KVGUARD_REJECTION_MAX_PROMPT_TOKENS): four times the incident's
   * 1,048,576-token window. The prompt is streamed, so the bound is not the operator's memory but
   * what kvguard sends an engine on the strength of figures the engine itself reports (about 4
   * bytes a token: 16 MiB at the default).
   */
  public static final long DEFAULT_MAX_PROMPT_TOKENS = 4L * 1024 * 1024;

  private final EngineHttp http;
  private final long maxPromptTokens;
  private final SentMarkers markers;

  public RejectionProbe(EngineHttp http) {
    this(http, DEFAULT_MAX_PROMPT_TOKENS);
  }

  public RejectionProbe(EngineHttp http, long maxPromptTokens) {
    this(http, maxPromptTokens, new SentMarkers());
  }

  /**
   * @param markers the markers of the prompts sent recently, shared by every probe of this process
   *     (all pods, all ModelDeployments), so an answer holding another probe's marker is seen
   */
  public RejectionProbe(EngineHttp http, long maxPromptTokens, SentMarkers markers) {
    this.http = http;
    this.maxPromptTokens = maxPromptTokens;
    this.markers = markers;
  }

  public long maxPromptTokens() {
    return maxPromptTokens;
  }

  /** This probe, its prompts' markers registered in {@code markers} instead. */
  public RejectionProbe withMarkers(SentMarkers markers) {
    return new RejectionProbe(http, maxPromptTokens, markers);
  }

  /**
   * @param engine the engine's rejection knowledge, or empty when kvguard has none for it (fails
   *     closed)
   * @param observation what the pool probe of the same process saw
   */
  public RejectionOutcome send(
      Optional<EngineRejection> engine,
      String engineName,
      EngineEndpoint endpoint,
      long promptTokens,
      String model,
      PoolObservation observation,
      EngineRejection.Route route) {
    if (engine.isEmpty()) {
      return new RejectionOutcome.Failed("kvguard has no rejection probe for engine " + engineName);
    }
    AdmissionPlan paths;
    try {
      paths = engine.get().paths(http, endpoint, promptTokens, observation, route);
    } catch (ProbeException e) {
      return new RejectionOutcome.Failed(
          "the engine's admission limits could not be read: " + e.getMessage());
    } catch (RuntimeException e) {
      // As a pool probe that threw (EngineProbe.probe): failed, in the operator and in check alike.
      return new RejectionOutcome.Failed(EngineProbe.unexpected(e));
    }
    return sendPlan(engine.get(), endpoint, paths, promptTokens, model, observation, route);
  }

  /**
   * Sends prompts computed elsewhere (through a prefill/decode router, from every worker's own
   * figures: {@link io.kvguard.verdict.SglangRouterPaths}), judged as {@link #send} judges them.
   */
  public RejectionOutcome sendPlan(
      EngineRejection engine,
      EngineEndpoint endpoint,
      AdmissionPlan paths,
      long promptTokens,
      String model,
      PoolObservation observation,
      EngineRejection.Route route) {
    try {
      if (paths instanceof AdmissionPlan.Unprovable unprovable) {
        return new RejectionOutcome.Inconclusive("not sent: " + unprovable.reason(), promptTokens);
      }
      List<ProbePrompt> prompts = ((AdmissionPlan.Prompts) paths).prompts();
      List<String> refusals = new ArrayList<>();
      RejectionOutcome.Refused first = null;
      // In order, and no further once one is not its check's own refusal: the gate stays shut then,
      // and the answer names that check.
      for (ProbePrompt probePrompt : prompts) {
        RejectionOutcome outcome =
            sendOne(engine, endpoint, probePrompt, model, observation, route);
        if (!(outcome instanceof RejectionOutcome.Refused refused)) {
          return outcome;
        }
        first = first == null ? refused : first;
        refusals.add(
            probePrompt.check()
                + " refused "
                + probePrompt.tokens()
                + " tokens with HTTP "
                + refused.status()
                + RejectionOutcome.Refused.REFUSED_AS
                + refused.errorClass());
      }
      boolean pathAware = prompts.stream().anyMatch(p -> !p.refusals().isEmpty());
      return pathAware
          ? RejectionOutcome.Refused.ofPaths(first.status(), refusals, promptTokens)
          : first;
    } catch (RuntimeException e) {
      // As a pool probe that threw (EngineProbe.probe): failed, in the operator and in check alike.
      return new RejectionOutcome.Failed(EngineProbe.unexpected(e));
    }
  }

  /** Sends one prompt and says whether it met the refusal of the check it was sized for. */
  private RejectionOutcome sendOne(
      EngineRejection engine,
      EngineEndpoint endpoint,
      ProbePrompt probePrompt,
      String model,
      PoolObservation observation,
      EngineRejection.Route route) {
    long promptTokens = probePrompt.tokens();
    String named = probePrompt.refusals().isEmpty() ? "" : " (" + probePrompt.check() + ")";
    if (promptTokens > maxPromptTokens) {
      // Never sent: the engine's own figures call for a prompt larger than kvguard sends; nothing
      // is proven.
      return new RejectionOutcome.Inconclusive(
          "the engine's figures call for a "
              + promptTokens
              + "-token prompt"
              + named
              + ","
              + " above KVGUARD_REJECTION_MAX_PROMPT_TOKENS ("
              + maxPromptTokens
              + "), so it was not sent and the"
              + " rejection path is unproven; if the engine really holds that many tokens, raise the limit",
          promptTokens);
    }
    EngineRejection.Plan plan = engine.plan(probePrompt, model, observation, route);
    if (plan instanceof EngineRejection.Plan.Skip skip) {
      return new RejectionOutcome.Inconclusive("not sent: " + skip.reason(), promptTokens);
    }
    ProbeMarker marker = markers.next();
    OverLimitPrompt prompt = ((EngineRejection.Plan.Send) plan).prompt().marked(marker);
    EngineResponse sent;
    try {
      sent = http.postJson(endpoint, prompt.path(), prompt.publisher());
    } catch (ArithmeticException e) {
      return new RejectionOutcome.Failed(
          "a " + promptTokens + "-token prompt is too large to send");
    } catch (ProbeException e) {
      return new RejectionOutcome.Failed(e.getMessage());
    }
    // Through the prefill/decode router a worker's error arrives inside the router's own: judged
    // as the worker's answer, as a pod's would be (RouterWorkerError).
    EngineResponse response =
        route == EngineRejection.Route.PD_ROUTER
            ? RouterWorkerError.workerAnswer(sent).orElse(sent)
            : sent;
    int status = response.status();
    boolean streamed =
        response.contentType() != null
            && response.contentType().toLowerCase(Locale.ROOT).startsWith("text/event-stream");
    if (status >= 400 && status < 500 && !streamed) {
      Optional<String> refusal = engine.refusal(response, prompt, observation);
      if (refusal.isPresent() && probePrompt.refusedBy(refusal.get())) {
        Optional<Long> limit = engine.statedLimit(response);
        if (!probePrompt.statedLimits().isEmpty()
            && (limit.isEmpty() || !probePrompt.statedLimits().contains(limit.get()))) {
          // Through a router the refusing worker cannot be chosen: a check whose limit no worker
          // reported (a decode worker below the prompt refusing it for the prefill worker, a
          // /server_info that is not its scheduler's) refused it, and the path sized for is
          // unproven.
          return new RejectionOutcome.Inconclusive(
              "POST "
                  + prompt.path()
                  + " refused the "
                  + promptTokens
                  + "-token prompt sized for the "
                  + probePrompt.check()
                  + " as "
                  + refusal.get()
                  + ", but its sentence states a limit of "
                  + limit.map(String::valueOf).orElse("(no number)")
                  + " tokens, none of the max_req_input_len values the pods behind the route reported "
                  + new java.util.TreeSet<>(probePrompt.statedLimits())
                  + ": the check that refused is not one whose figures sized the prompt (a decode"
                  + " worker whose own limit is below it, answering for the prefill worker; a"
                  + " /server_info that is not its scheduler's), so that path was not proven; compare"
                  + " each prefill and decode pod's /server_info with its launch arguments",
              promptTokens);
        }
        return new RejectionOutcome.Refused(status, refusal.get(), promptTokens);
      }
      if (refusal.isPresent()) {
        // The engine's refusal, but another check's: the engine's limits are not what it reported,
        // so the check this prompt was sized for was not reached.
        return new RejectionOutcome.Inconclusive(
            "POST "
                + prompt.path()
                + " refused the "
                + promptTokens
                + "-token prompt sized for the "
                + probePrompt.check()
                + " with another check's refusal ("
                + refusal.get()
                + "): the engine's limits differ from what it reported, so that check was not reached;"
                + " compare the limits the engine reports (SGLang /server_info and /v1/models, vLLM"
                + " /v1/models, TGI /info, llama.cpp /props) with its launch arguments",
            promptTokens);
      }
      return new RejectionOutcome.Inconclusive(
          notARefusal(engine, response, prompt, observation) + named, promptTokens);
    }
    Optional<String> routerCode =
        route == EngineRejection.Route.PD_ROUTER
            ? RouterSelectionFailure.code(response)
            : Optional.empty();
    if (routerCode.isPresent()) {
      // The router's own answer, not an engine's: nothing about the rejection path is known.
      return new RejectionOutcome.Inconclusive(
          RouterSelectionFailure.reason(prompt.path(), routerCode.get()) + named, promptTokens);
    }
    Optional<String> foldedDecode =
        route == EngineRejection.Route.PD_ROUTER
            ? RouterFoldedDecodeError.reason(response, prompt.path(), prompt.contentLength())
            : Optional.empty();
    if (foldedDecode.isPresent()) {
      // The decode worker refused with a status the router does not pass on (401, 413, …): not the
      // engine's answer to the prompt, so inconclusive rather than unsafe.
      return new RejectionOutcome.Inconclusive(foldedDecode.get() + named, promptTokens);
    }
    if (status >= 300 && status < 400) {
      return new RejectionOutcome.Failed(
          "POST " + prompt.path() + " answered HTTP " + status + " (redirects are not followed)");
    }
    // The one look at an answer's content: scanned in memory for markers, then dropped with the
    // response (issue 26 §4).
    MarkerFinding found =
        streamed
            ? new MarkerFinding.Unchecked("the answer was streamed, and kvguard reads no streams")
            : MarkerScan.scan(marker, markers.recent(), engine.answerContent(response));
    return new RejectionOutcome.Answered(
        status,
        response.length(),
        response.sha256(),
        promptTokens,
        streamed,
        engine.answerMeaning(),
        probePrompt.refusals().isEmpty() ? "" : probePrompt.check(),
        found);
  }

  private static String notARefusal(
      EngineRejection engine,
      EngineResponse response,
      OverLimitPrompt prompt,
      PoolObservation observation) {
    return "POST "
        + prompt.path()
        + " answered HTTP "
        + response.status()
        + " ("
        + EngineText.safe(response.contentType())
        + "), which is not "
        + engine.refusalShape()
        + "; "
        + engine
            .fixFor(response, prompt, observation)
            .orElse(
                "something other than the engine answered (a proxy, an"
                    + " authentication layer) or an engine build kvguard does not know: point the role's port at the"
                    + " engine itself and check which component answered in the engine's and the proxy's logs");
  }
}
