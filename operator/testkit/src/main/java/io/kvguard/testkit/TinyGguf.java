package io.kvguard.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A llama model of about 200 KB with random weights, in GGUF v3 (llama.cpp's {@code
 * ggml/docs/gguf.md}), so that a real {@code llama-server} can start and answer every endpoint
 * without a download. The weights are noise: what the tests need is the server's own bookkeeping
 * (slots, context, refusals), never sensible text.
 *
 * <p>The vocabulary is what every test prompt needs and no more: {@code <unk>}, {@code <s>}, {@code
 * </s>}, the 128 ASCII byte tokens and {@code ▁}. With all 256 bytes the random output would be
 * invalid UTF-8 ({@code /completion} answers 500); without {@code ▁}, text with spaces is refused.
 * {@code llama.context_length} is large so that {@code -c} alone sets the server's KV pool.
 */
public final class TinyGguf {
  public static final int EMBEDDING = 64;
  public static final int FEED_FORWARD = 128;
  public static final int BLOCKS = 2;
  public static final int HEADS = 4;
  public static final int ROPE_DIMENSIONS = 16;
  public static final long CONTEXT_LENGTH = 1_048_576;
  public static final int ALIGNMENT = 32;
  static final int BYTE_TOKENS = 128;

  /** {@code <unk>}, {@code <s>}, {@code </s>}, the byte tokens, {@code ▁}. */
  public static final int VOCABULARY = 3 + BYTE_TOKENS + 1;

  public static final int UNK = 0;
  public static final int BOS = 1;
  public static final int EOS = 2;

  static final int MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32
  static final int VERSION = 3;

  private TinyGguf() {}

  /** Writes the model to {@code file}, the same bytes for the same seed. */
  public static Path write(Path file, long seed) throws IOException {
    Files.write(file, bytes(seed));
    return file;
  }

  public static byte[] bytes(long seed) {
    Random random = new Random(seed);
    List<Tensor> tensors = new ArrayList<>();
    tensors.add(Tensor.f16("token_embd.weight", random, EMBEDDING, VOCABULARY));
    // Norm weights stay f32, as llama.cpp's converter keeps every one-dimensional tensor.
    tensors.add(Tensor.ones("output_norm.weight", EMBEDDING));
    tensors.add(Tensor.f16("output.weight", random, EMBEDDING, VOCABULARY));
    for (int block = 0; block < BLOCKS; block++) {
      String blk = "blk." + block + ".";
      tensors.add(Tensor.ones(blk + "attn_norm.weight", EMBEDDING));
      tensors.add(Tensor.f16(blk + "attn_q.weight", random, EMBEDDING, EMBEDDING));
      tensors.add(Tensor.f16(blk + "attn_k.weight", random, EMBEDDING, EMBEDDING));
      tensors.add(Tensor.f16(blk + "attn_v.weight", random, EMBEDDING, EMBEDDING));
      tensors.add(Tensor.f16(blk + "attn_output.weight", random, EMBEDDING, EMBEDDING));
      tensors.add(Tensor.ones(blk + "ffn_norm.weight", EMBEDDING));
      tensors.add(Tensor.f16(blk + "ffn_gate.weight", random, EMBEDDING, FEED_FORWARD));
      tensors.add(Tensor.f16(blk + "ffn_up.weight", random, EMBEDDING, FEED_FORWARD));
      tensors.add(Tensor.f16(blk + "ffn_down.weight", random, FEED_FORWARD, EMBEDDING));
    }

    GgufOut out = new GgufOut();
    out.u32(MAGIC);
    out.u32(VERSION);
    out.u64(tensors.size());
    Metadata metadata = metadata();
    out.u64(metadata.count);
    out.raw(metadata.bytes.toByteArray());

    long offset = 0;
    for (Tensor tensor : tensors) {
      out.string(tensor.name);
      out.u32(tensor.dims.length);
      for (long dim : tensor.dims) {
        out.u64(dim);
      }
      out.u32(tensor.ggmlType);
      out.u64(offset);
      offset = aligned(offset + tensor.data.length);
    }
    out.padTo(ALIGNMENT);
    long dataStart = out.size();
    for (Tensor tensor : tensors) {
      out.raw(tensor.data);
      out.padTo(ALIGNMENT);
    }
    if (out.size() - dataStart != offset) {
      throw new IllegalStateException("tensor data does not end where the offsets say");
    }
    return out.toByteArray();
  }

  private static Metadata metadata() {
    Metadata m = new Metadata();
    m.string("general.architecture", "llama");
    m.string("general.name", "kvguard tiny random llama");
    m.u32("general.alignment", ALIGNMENT);
    m.u32("llama.context_length", CONTEXT_LENGTH);
    m.u32("llama.embedding_length", EMBEDDING);
    m.u32("llama.block_count", BLOCKS);
    m.u32("llama.feed_forward_length", FEED_FORWARD);
    m.u32("llama.attention.head_count", HEADS);
    m.u32("llama.attention.head_count_kv", HEADS);
    m.u32("llama.rope.dimension_count", ROPE_DIMENSIONS);
    m.f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);

    List<String> tokens = new ArrayList<>();
    List<Integer> types = new ArrayList<>();
    tokens.add("<unk>");
    types.add(TokenType.UNKNOWN);
    tokens.add("<s>");
    types.add(TokenType.CONTROL);
    tokens.add("</s>");
    types.add(TokenType.CONTROL);
    for (int b = 0; b < BYTE_TOKENS; b++) {
      tokens.add(String.format("<0x%02X>", b));
      types.add(TokenType.BYTE);
    }
    tokens.add("\u2581"); // SentencePiece's space
    types.add(TokenType.NORMAL);

    m.string("tokenizer.ggml.model", "llama");
    m.stringArray("tokenizer.ggml.tokens", tokens);
    float[] scores = new float[tokens.size()];
    m.f32Array("tokenizer.ggml.scores", scores);
    m.i32Array("tokenizer.ggml.token_type", types);
    m.u32("tokenizer.ggml.bos_token_id", BOS);
    m.u32("tokenizer.ggml.eos_token_id", EOS);
    m.u32("tokenizer.ggml.unknown_token_id", UNK);
    m.bool("tokenizer.ggml.add_space_prefix", false);
    return m;
  }

  static long aligned(long offset) {
    return (offset + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
  }

  /** llama.cpp's {@code llama_token_type}. */
  static final class TokenType {
    static final int NORMAL = 1;
    static final int UNKNOWN = 2;
    static final int CONTROL = 3;
    static final int BYTE = 6;

    private TokenType() {}
  }

  /** GGUF's metadata value types ({@code gguf_type}). */
  static final class ValueType {
    static final int UINT32 = 4;
    static final int INT32 = 5;
    static final int FLOAT32 = 6;
    static final int BOOL = 7;
    static final int STRING = 8;
    static final int ARRAY = 9;

    private ValueType() {}
  }

  /** ggml's tensor types ({@code ggml_type}). */
  static final class GgmlType {
    static final int F32 = 0;
    static final int F16 = 1;

    private GgmlType() {}
  }

  private static final class Metadata {
    final GgufOut bytes = new GgufOut();
    long count;

    private void key(String key, int type) {
      bytes.string(key);
      bytes.u32(type);
      count++;
    }

    void string(String key, String value) {
      key(key, ValueType.STRING);
      bytes.string(value);
    }

    void u32(String key, long value) {
      key(key, ValueType.UINT32);
      bytes.u32((int) value);
    }

    void f32(String key, float value) {
      key(key, ValueType.FLOAT32);
      bytes.f32(value);
    }

    void bool(String key, boolean value) {
      key(key, ValueType.BOOL);
      bytes.raw(new byte[] {(byte) (value ? 1 : 0)});
    }

    void stringArray(String key, List<String> values) {
      array(key, ValueType.STRING, values.size());
      values.forEach(bytes::string);
    }

    void f32Array(String key, float[] values) {
      array(key, ValueType.FLOAT32, values.length);
      for (float value : values) {
        bytes.f32(value);
      }
    }

    void i32Array(String key, List<Integer> values) {
      array(key, ValueType.INT32, values.size());
      values.forEach(bytes::u32);
    }

    private void array(String key, int elementType, int length) {
      key(key, ValueType.ARRAY);
      bytes.u32(elementType);
      bytes.u64(length);
    }
  }

  /** One tensor: dimensions in GGUF order (ne0, the fastest-moving, first) and its bytes. */
  private static final class Tensor {
    final String name;
    final long[] dims;
    final int ggmlType;
    final byte[] data;

    private Tensor(String name, long[] dims, int ggmlType, byte[] data) {
      this.name = name;
      this.dims = dims;
      this.ggmlType = ggmlType;
      this.data = data;
    }

    static Tensor f16(String name, Random random, int ne0, int ne1) {
      ByteBuffer data = ByteBuffer.allocate(ne0 * ne1 * 2).order(ByteOrder.LITTLE_ENDIAN);
      while (data.hasRemaining()) {
        data.putShort(half((random.nextFloat() * 2 - 1) * 0.1f));
      }
      return new Tensor(name, new long[] {ne0, ne1}, GgmlType.F16, data.array());
    }

    static Tensor ones(String name, int ne0) {
      ByteBuffer data = ByteBuffer.allocate(ne0 * 4).order(ByteOrder.LITTLE_ENDIAN);
      while (data.hasRemaining()) {
        data.putFloat(1f);
      }
      return new Tensor(name, new long[] {ne0}, GgmlType.F32, data.array());
    }

    /**
     * IEEE half precision by truncation (Java 17 has no Float.floatToFloat16). Only for |value| <
     * 1: values too small for a normal half become zero, which noise weights can afford.
     */
    static short half(float value) {
      int bits = Float.floatToIntBits(value);
      int sign = (bits >>> 16) & 0x8000;
      int exponent = ((bits >>> 23) & 0xff) - 127 + 15;
      if (exponent <= 0) {
        return (short) sign;
      }
      return (short) (sign | exponent << 10 | (bits >>> 13) & 0x3ff);
    }
  }

  /** Little-endian output, as GGUF is written on every platform llama.cpp runs on here. */
  private static final class GgufOut {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);

    void u32(int value) {
      scratch.clear();
      out.write(scratch.putInt(value).array(), 0, 4);
    }

    void u64(long value) {
      scratch.clear();
      out.write(scratch.putLong(value).array(), 0, 8);
    }

    void f32(float value) {
      u32(Float.floatToIntBits(value));
    }

    /** gguf_string: a uint64 byte length, then UTF-8 without a terminator. */
    void string(String value) {
      byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
      u64(utf8.length);
      out.write(utf8, 0, utf8.length);
    }

    void raw(byte[] bytes) {
      out.write(bytes, 0, bytes.length);
    }

    void padTo(int alignment) {
      while (out.size() % alignment != 0) {
        out.write(0);
      }
    }

    long size() {
      return out.size();
    }

    byte[] toByteArray() {
      return out.toByteArray();
    }
  }
}
