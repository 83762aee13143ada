package io.kvguard.verdict;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Scans an answer's content once for probe markers (issue 26 §4): the prompt's own, and every other
 * marker kvguard sent recently. A marker counts only whole and in order ({@link
 * ProbeMarker#SYMBOLS} consecutive token IDs, or one-letter words separated by whitespace): a stray
 * symbol or two is what any text holds, eight in the order of a marker sent is not.
 */
public final class MarkerScan {
  private MarkerScan() {}

  /**
   * @param own the marker of the prompt this answer answered
   * @param sent the markers sent recently (may include {@code own})
   */
  public static MarkerFinding scan(
      ProbeMarker own, Collection<ProbeMarker> sent, AnswerContent content) {
    if (content instanceof AnswerContent.Unreadable unreadable) {
      return new MarkerFinding.Unchecked(unreadable.why());
    }
    Set<Long> found = new HashSet<>();
    List<int[]> symbolLists = symbols(content);
    int longest = symbolLists.stream().mapToInt(list -> list.length).max().orElse(0);
    List<int[]> runs = new ArrayList<>();
    for (int[] symbols : symbolLists) {
      split(symbols, runs);
    }
    for (int[] run : runs) {
      for (int from = 0; from + ProbeMarker.SYMBOLS <= run.length; from++) {
        found.add(ProbeMarker.codeOf(run, from));
      }
    }
    boolean ownFound = found.contains(own.code());
    boolean otherFound =
        sent.stream().anyMatch(m -> m.code() != own.code() && found.contains(m.code()));
    return otherFound
        ? new MarkerFinding.HeldOther(ownFound)
        : new MarkerFinding.HeldNoOther(ownFound, longest);
  }

  /** Each token ID list, or the text's words, as symbols (-1 where a unit carries none). */
  private static List<int[]> symbols(AnswerContent content) {
    List<int[]> lists = new ArrayList<>();
    if (content instanceof AnswerContent.TokenIds ids) {
      for (long[] sequence : ids.sequences()) {
        int[] symbols = new int[sequence.length];
        for (int i = 0; i < sequence.length; i++) {
          symbols[i] = ProbeMarker.symbolOfTokenId(sequence[i]);
        }
        lists.add(symbols);
      }
    } else {
      String text = ((AnswerContent.Text) content).text().strip();
      String[] words = text.isEmpty() ? new String[0] : text.split("\\s+");
      int[] symbols = new int[words.length];
      for (int i = 0; i < words.length; i++) {
        symbols[i] = ProbeMarker.symbolOfWord(words[i]);
      }
      lists.add(symbols);
    }
    return lists;
  }

  /** Adds the runs of {@code symbols} between the -1s (no symbol) that are long enough. */
  private static void split(int[] symbols, List<int[]> runs) {
    int start = 0;
    for (int i = 0; i <= symbols.length; i++) {
      if (i == symbols.length || symbols[i] < 0) {
        if (i - start >= ProbeMarker.SYMBOLS) {
          runs.add(java.util.Arrays.copyOfRange(symbols, start, i));
        }
        start = i + 1;
      }
    }
  }
}
