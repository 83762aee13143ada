package io.kvguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The tiny model read back as llama.cpp's GGUF loader reads it ({@code gguf_init_from_file}):
 * header, metadata, tensor infos, aligned data. That a real llama-server loads and serves it is
 * shown by the *RealEngineIT classes.
 */
class TinyGgufTest {
  private final byte[] file = TinyGguf.bytes(42);
  private final Read read = new Read(file);

  @Test
  void theHeaderSaysGgufVersionThreeWithTheTensorAndKeyCounts() {
    assertThat(new String(file, 0, 4, StandardCharsets.US_ASCII)).isEqualTo("GGUF");
    assertThat(read.version).isEqualTo(3);
    assertThat(read.tensors).hasSize(3 + 9 * TinyGguf.BLOCKS);
    assertThat(read.metadata).hasSize((int) read.kvCount);
  }

  @Test
  void theMetadataDescribesATwoBlockLlamaWithALongContextAndTheByteVocabulary() {
    assertThat(read.metadata)
        .containsEntry("general.architecture", "llama")
        .containsEntry("general.alignment", 32L)
        .containsEntry("llama.context_length", 1_048_576L)
        .containsEntry("llama.embedding_length", 64L)
        .containsEntry("llama.block_count", 2L)
        .containsEntry("llama.feed_forward_length", 128L)
        .containsEntry("llama.attention.head_count", 4L)
        .containsEntry("llama.attention.head_count_kv", 4L)
        .containsEntry("llama.rope.dimension_count", 16L)
        .containsEntry("tokenizer.ggml.model", "llama")
        .containsEntry("tokenizer.ggml.add_space_prefix", false)
        .containsEntry("tokenizer.ggml.bos_token_id", 1L)
        .containsEntry("tokenizer.ggml.eos_token_id", 2L)
        .containsEntry("tokenizer.ggml.unknown_token_id", 0L);
    @SuppressWarnings("unchecked")
    List<Object> tokens = (List<Object>) read.metadata.get("tokenizer.ggml.tokens");
    assertThat(tokens).hasSize(132).startsWith("<unk>", "<s>", "</s>", "<0x00>").endsWith("▁");
    assertThat(tokens.get(3 + 0x7F)).isEqualTo("<0x7F>");
    @SuppressWarnings("unchecked")
    List<Object> types = (List<Object>) read.metadata.get("tokenizer.ggml.token_type");
    assertThat(types).startsWith(2L, 3L, 3L, 6L).endsWith(6L, 1L);
    assertThat((List<?>) read.metadata.get("tokenizer.ggml.scores")).hasSize(132);
  }

  @Test
  void tensorsHaveTheirShapesInGgufOrderAndAlignedOffsetsThatEndTheFile() {
    assertThat(read.tensors.get("token_embd.weight").dims).containsExactly(64L, 132L);
    assertThat(read.tensors.get("output_norm.weight").dims).containsExactly(64L);
    assertThat(read.tensors.get("blk.1.ffn_gate.weight").dims).containsExactly(64L, 128L);
    assertThat(read.tensors.get("blk.1.ffn_down.weight").dims).containsExactly(128L, 64L);
    assertThat(read.tensors.get("blk.0.attn_k.weight").type).isEqualTo(1); // f16
    assertThat(read.dataStart % 32).isZero();
    long end = 0;
    for (TensorInfo tensor : read.tensors.values()) {
      assertThat(tensor.offset % 32).as(tensor.name).isZero();
      assertThat(tensor.offset).as(tensor.name).isGreaterThanOrEqualTo(end);
      end = tensor.offset + tensor.bytes();
    }
    assertThat((long) file.length).isEqualTo(read.dataStart + end);
  }

  @Test
  void theModelIsAboutTwoHundredKilobytesAndTheSameForTheSameSeed() {
    assertThat(file.length).isBetween(150_000, 250_000);
    assertThat(TinyGguf.bytes(42)).isEqualTo(file);
    assertThat(TinyGguf.bytes(43)).isNotEqualTo(file);
  }

  private record TensorInfo(String name, List<Long> dims, int type, long offset) {
    long bytes() {
      long elements = dims.stream().reduce(1L, (a, b) -> a * b);
      return elements * (type == 1 ? 2 : 4);
    }
  }

  /** A reader of the GGUF layout, written from the spec, independent of the writer. */
  private static final class Read {
    final int version;
    final long kvCount;
    final Map<String, Object> metadata = new LinkedHashMap<>();
    final Map<String, TensorInfo> tensors = new LinkedHashMap<>();
    final long dataStart;
    private final ByteBuffer in;

    Read(byte[] file) {
      in = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
      in.getInt();
      version = in.getInt();
      long tensorCount = in.getLong();
      kvCount = in.getLong();
      for (long i = 0; i < kvCount; i++) {
        String key = string();
        metadata.put(key, value(in.getInt()));
      }
      for (long i = 0; i < tensorCount; i++) {
        String name = string();
        int dimCount = in.getInt();
        List<Long> dims = new ArrayList<>();
        for (int d = 0; d < dimCount; d++) {
          dims.add(in.getLong());
        }
        tensors.put(name, new TensorInfo(name, dims, in.getInt(), in.getLong()));
      }
      long alignment = (Long) metadata.get("general.alignment");
      dataStart = (in.position() + alignment - 1) / alignment * alignment;
    }

    private String string() {
      byte[] bytes = new byte[(int) in.getLong()];
      in.get(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    }

    private Object value(int type) {
      switch (type) {
        case 4:
          return Integer.toUnsignedLong(in.getInt());
        case 5:
          return (long) in.getInt();
        case 6:
          return in.getFloat();
        case 7:
          return in.get() != 0;
        case 8:
          return string();
        case 9:
          int elementType = in.getInt();
          long count = in.getLong();
          List<Object> values = new ArrayList<>();
          for (long i = 0; i < count; i++) {
            values.add(value(elementType));
          }
          return values;
        default:
          throw new AssertionError("a value type the tiny model should not use: " + type);
      }
    }
  }
}
