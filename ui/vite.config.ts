import { defineConfig } from 'vitest/config';

// Preact through esbuild's automatic JSX runtime: no framework plugin needed.
export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  clearScreen: false,
  server: { port: 1420, strictPort: true },
  build: { target: 'es2021', outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 600 },
  test: { include: ['tests/unit/**/*.test.ts'], environment: 'node' },
});
