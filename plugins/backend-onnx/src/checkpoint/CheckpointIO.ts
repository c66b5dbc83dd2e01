/** How an engine writes its checkpoint folder and reads one back (`save`, `load`). */
export interface CheckpointIO {
  save(dir: string, options: SaveOptions): Promise<void>;
  load(dir: string, options: LoadOptions): Promise<void>;
}

export interface SaveOptions {
  /** Write AdamW's state beside the weights (default true). */
  optimizer?: boolean;
  dtype?: 'float32' | 'bfloat16';
}

export interface LoadOptions {
  /** Load the folder's optimizer state (default: when it has one). */
  optimizer?: boolean;
}
