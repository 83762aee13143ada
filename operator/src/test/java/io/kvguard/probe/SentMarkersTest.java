package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.verdict.ProbeMarker;
import java.util.ArrayList;
import java.util.List;
import java.util.PrimitiveIterator;
import java.util.random.RandomGenerator;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** The operator's registry of recent probe markers: unique, bounded, nothing but markers. */
class SentMarkersTest {

  /** A source that gives these raw values in turn, so a repeat can be forced. */
  private static RandomGenerator giving(long... raw) {
    PrimitiveIterator.OfLong values = LongStream.of(raw).iterator();
    return values::nextLong;
  }

  @Test
  void aDrawnMarkerThatIsAlreadyHeldIsDrawnAgain() {
    SentMarkers markers = new SentMarkers(10, giving(5, 5, 6));

    ProbeMarker first = markers.next();
    ProbeMarker second = markers.next();

    assertThat(second).isNotEqualTo(first);
    assertThat(markers.recent()).containsExactly(first, second);
  }

  @Test
  void onlyTheMostRecentMarkersAreHeld() {
    SentMarkers markers = new SentMarkers(3, giving(2, 4, 6, 8, 10));
    List<ProbeMarker> sent = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      sent.add(markers.next());
    }

    assertThat(markers.recent()).containsExactlyElementsOf(sent.subList(2, 5));
  }
}
