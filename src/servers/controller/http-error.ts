// An HTTP answer a handler gives up with. The message goes to the client as the plain-text error
// body and names what was wrong, so a device author can see why the controller refused.

export class ControllerHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Counted separately in the stats: the body could not be decoded as the expected message. */
    readonly undecodable = false,
  ) {
    super(message);
    this.name = 'ControllerHttpError';
  }
}

export const badRequest = (msg: string) => new ControllerHttpError(400, msg);
export const unauthorized = (msg: string) => new ControllerHttpError(401, msg);
export const forbidden = (msg: string) => new ControllerHttpError(403, msg);
export const notFound = (msg: string) => new ControllerHttpError(404, msg);
export const conflict = (msg: string) => new ControllerHttpError(409, msg);
/** Missing or unprocessable body (controller-api-v2 Errors table). */
export const unprocessable = (msg: string) => new ControllerHttpError(422, msg, true);
