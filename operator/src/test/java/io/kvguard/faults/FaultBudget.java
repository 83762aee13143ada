package io.kvguard.faults;

import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.kvguard.testkit.EmbeddedApiServer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * An API-server fault hook: requests matching {@code which} get the queued answers one by one, then
 * pass through to the server. Counts how many it answered, so a test can say how many faults the
 * operator met.
 */
final class FaultBudget implements Function<RecordedRequest, MockResponse> {
  private final Predicate<RecordedRequest> which;
  private final Deque<Supplier<MockResponse>> answers;
  private int injected;

  FaultBudget(Predicate<RecordedRequest> which, List<Supplier<MockResponse>> answers) {
    this.which = which;
    this.answers = new ArrayDeque<>(answers);
  }

  static Supplier<MockResponse> status(int code, String reason) {
    return () -> {
      MockResponse response =
          new MockResponse()
              .setResponseCode(code)
              .setBody(EmbeddedApiServer.status(code, reason, "injected by the test"));
      if (code == 429) {
        response.setHeader("Retry-After", "1");
      }
      return response;
    };
  }

  static List<Supplier<MockResponse>> times(int n, Supplier<MockResponse> answer) {
    return java.util.Collections.nCopies(n, answer);
  }

  /** A pod WATCH sent by the operator under test (its User-Agent), not by the test's own client. */
  static boolean operatorPodWatch(RecordedRequest r) {
    return r.getMethod().equals("GET")
        && r.getPath().contains("/pods")
        && r.getPath().contains("watch=true")
        && io.kvguard.testing.OperatorHarness.OPERATOR_AGENT.equals(r.getHeader("User-Agent"));
  }

  static Predicate<RecordedRequest> request(String method, String pathPart) {
    return r -> r.getMethod().equals(method) && r.getPath().contains(pathPart);
  }

  @Override
  public synchronized MockResponse apply(RecordedRequest request) {
    if (!which.test(request) || answers.isEmpty()) {
      return null;
    }
    injected++;
    return answers.poll().get();
  }

  synchronized int injected() {
    return injected;
  }

  synchronized boolean spent() {
    return answers.isEmpty();
  }
}
