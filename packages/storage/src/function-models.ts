/**
 * Where a function version's own model lives (copied from an uploaded asset, which expires) and the
 * name it has in a worker's model repository. The gateway writes it; workers that serve the version
 * read it.
 */
export const functionModelObjectKey = (versionId: string) => `models/${versionId}/model.onnx`;
/** A zipped Triton model directory (config, versions, labels) given as the function's model. */
export const functionModelArchiveKey = (versionId: string) => `models/${versionId}/model.zip`;
export const functionModelName = (versionId: string) => `fv-${versionId}`;
export const isFunctionModelName = (name: string) => /^fv-[0-9a-f-]{36}$/.test(name);
