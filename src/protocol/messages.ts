// Typed codecs for the EVE messages the simulator uses. Each getter returns the
// cached codec (created on first use), so `Msg.ZInfoMsg.encode(...)` is cheap.
import { codec, type Codec } from './codec.js';
import type { attest, auth, certs, config, flowlog, info, logs, metrics, profile, register, uuid } from '../gen/eve-types.js';

const P = 'org.lfedge.eve';

export const Msg = {
  // envelope, onboarding, certificates
  get AuthContainer(): Codec<auth.AuthContainer> { return codec(`${P}.auth.AuthContainer`); },
  get AuthBody(): Codec<auth.AuthBody> { return codec(`${P}.auth.AuthBody`); },
  get ZRegisterMsg(): Codec<register.ZRegisterMsg> { return codec(`${P}.register.ZRegisterMsg`); },
  get ZControllerCert(): Codec<certs.ZControllerCert> { return codec(`${P}.certs.ZControllerCert`); },
  get ZCert(): Codec<certs.ZCert> { return codec(`${P}.certs.ZCert`); },
  get UuidRequest(): Codec<uuid.UuidRequest> { return codec(`${P}.uuid.UuidRequest`); },
  get UuidResponse(): Codec<uuid.UuidResponse> { return codec(`${P}.uuid.UuidResponse`); },
  // configuration
  get ConfigRequest(): Codec<config.ConfigRequest> { return codec(`${P}.config.ConfigRequest`); },
  get ConfigResponse(): Codec<config.ConfigResponse> { return codec(`${P}.config.ConfigResponse`); },
  get EdgeDevConfig(): Codec<config.EdgeDevConfig> { return codec(`${P}.config.EdgeDevConfig`); },
  get BootstrapConfig(): Codec<config.BootstrapConfig> { return codec(`${P}.config.BootstrapConfig`); },
  // attestation
  get ZAttestReq(): Codec<attest.ZAttestReq> { return codec(`${P}.attest.ZAttestReq`); },
  get ZAttestResponse(): Codec<attest.ZAttestResponse> { return codec(`${P}.attest.ZAttestResponse`); },
  get ZAttestQuote(): Codec<attest.ZAttestQuote> { return codec(`${P}.attest.ZAttestQuote`); },
  get AttestVolumeKeyData(): Codec<attest.AttestVolumeKeyData> { return codec(`${P}.attest.AttestVolumeKeyData`); },
  // info, metrics, logs, flow logs
  get ZInfoMsg(): Codec<info.ZInfoMsg> { return codec(`${P}.info.ZInfoMsg`); },
  get ZInfoDevice(): Codec<info.ZInfoDevice> { return codec(`${P}.info.ZInfoDevice`); },
  get ZInfoApp(): Codec<info.ZInfoApp> { return codec(`${P}.info.ZInfoApp`); },
  get ZInfoLocation(): Codec<info.ZInfoLocation> { return codec(`${P}.info.ZInfoLocation`); },
  get ZMetricMsg(): Codec<metrics.ZMetricMsg> { return codec(`${P}.metrics.ZMetricMsg`); },
  get LogBundle(): Codec<logs.LogBundle> { return codec(`${P}.logs.LogBundle`); },
  get AppInstanceLogBundle(): Codec<logs.AppInstanceLogBundle> { return codec(`${P}.logs.AppInstanceLogBundle`); },
  get LogEntry(): Codec<logs.LogEntry> { return codec(`${P}.logs.LogEntry`); },
  get ServerMetrics(): Codec<logs.ServerMetrics> { return codec(`${P}.logs.ServerMetrics`); },
  get FlowMessage(): Codec<flowlog.FlowMessage> { return codec(`${P}.flowlog.FlowMessage`); },
  // local profile server
  get LocalProfile(): Codec<profile.LocalProfile> { return codec(`${P}.profile.LocalProfile`); },
  get RadioStatus(): Codec<profile.RadioStatus> { return codec(`${P}.profile.RadioStatus`); },
  get RadioConfig(): Codec<profile.RadioConfig> { return codec(`${P}.profile.RadioConfig`); },
  get LocalAppInfoList(): Codec<profile.LocalAppInfoList> { return codec(`${P}.profile.LocalAppInfoList`); },
  get LocalAppCmdList(): Codec<profile.LocalAppCmdList> { return codec(`${P}.profile.LocalAppCmdList`); },
  get LocalDevInfo(): Codec<profile.LocalDevInfo> { return codec(`${P}.profile.LocalDevInfo`); },
  get LocalDevCmd(): Codec<profile.LocalDevCmd> { return codec(`${P}.profile.LocalDevCmd`); },
  get AppBootInfoList(): Codec<profile.AppBootInfoList> { return codec(`${P}.profile.AppBootInfoList`); },
  get AppBootConfigList(): Codec<profile.AppBootConfigList> { return codec(`${P}.profile.AppBootConfigList`); },
  get NetworkInfo(): Codec<profile.NetworkInfo> { return codec(`${P}.profile.NetworkInfo`); },
  get LocalNetworkConfig(): Codec<profile.LocalNetworkConfig> { return codec(`${P}.profile.LocalNetworkConfig`); },
  get Signal(): Codec<profile.Signal> { return codec(`${P}.profile.Signal`); },
};
