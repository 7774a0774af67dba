// For test-security: the JVM's secrets must differ run to run under the
// shim (java is a never-pin program).
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.UUID;

public class SecretsJava {
    public static void main(String[] args) throws Exception {
        byte[] b = new byte[16];
        new SecureRandom().nextBytes(b);
        System.out.println("SecureRandom " + HexFormat.of().formatHex(b));
        SecureRandom.getInstanceStrong().nextBytes(b);
        System.out.println("getInstanceStrong " + HexFormat.of().formatHex(b));
        System.out.println("UUID " + UUID.randomUUID());
        byte[] pub = KeyPairGenerator.getInstance("X25519").generateKeyPair().getPublic().getEncoded();
        System.out.println("X25519 " + HexFormat.of().formatHex(pub));
    }
}
