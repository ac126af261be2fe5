-- The tables of a GOV.UK Signon database that the import reads, as Signon's db/schema.rb (2023-09-25, with
-- oauth_applications.api_only of the migration after it) makes them on MySQL: Rails' types (string as varchar(255),
-- boolean as tinyint(1), datetime without fractions, in UTC), ids as auto-increment integers.
CREATE TABLE organisations (
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  slug varchar(255) NOT NULL,
  name varchar(255) NOT NULL,
  organisation_type varchar(255) NOT NULL,
  abbreviation varchar(255) DEFAULT NULL,
  created_at datetime NOT NULL,
  updated_at datetime NOT NULL,
  ancestry varchar(255) DEFAULT NULL,
  content_id varchar(255) NOT NULL,
  closed tinyint(1) DEFAULT 0,
  require_2sv tinyint(1) NOT NULL DEFAULT 0,
  UNIQUE KEY index_organisations_on_slug (slug),
  UNIQUE KEY index_organisations_on_content_id (content_id),
  KEY index_organisations_on_ancestry (ancestry)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;

CREATE TABLE oauth_applications (
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name varchar(255) DEFAULT NULL,
  uid varchar(255) NOT NULL,
  secret varchar(255) NOT NULL,
  redirect_uri varchar(255) NOT NULL,
  created_at datetime NOT NULL,
  updated_at datetime NOT NULL,
  home_uri varchar(255) DEFAULT NULL,
  description varchar(255) DEFAULT NULL,
  supports_push_updates tinyint(1) DEFAULT 1,
  retired tinyint(1) DEFAULT 0,
  api_only tinyint(1) NOT NULL DEFAULT 0,
  confidential tinyint(1) NOT NULL DEFAULT 1,
  UNIQUE KEY index_oauth_applications_on_uid (uid),
  UNIQUE KEY unique_application_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;

CREATE TABLE supported_permissions (
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  application_id int DEFAULT NULL,
  name varchar(255) DEFAULT NULL,
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  delegatable tinyint(1) DEFAULT 0,
  grantable_from_ui tinyint(1) NOT NULL DEFAULT 1,
  `default` tinyint(1) NOT NULL DEFAULT 0,
  UNIQUE KEY index_supported_permissions_on_application_id_and_name (application_id, name),
  KEY index_supported_permissions_on_application_id (application_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;

CREATE TABLE users (
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name varchar(255) NOT NULL,
  email varchar(255) NOT NULL DEFAULT '',
  encrypted_password varchar(255) DEFAULT '',
  reset_password_token varchar(255) DEFAULT NULL,
  reset_password_sent_at datetime DEFAULT NULL,
  sign_in_count int DEFAULT 0,
  current_sign_in_at datetime DEFAULT NULL,
  last_sign_in_at datetime DEFAULT NULL,
  current_sign_in_ip varchar(255) DEFAULT NULL,
  last_sign_in_ip varchar(255) DEFAULT NULL,
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  uid varchar(255) NOT NULL,
  failed_attempts int DEFAULT 0,
  locked_at datetime DEFAULT NULL,
  suspended_at datetime DEFAULT NULL,
  invitation_token varchar(255) DEFAULT NULL,
  invitation_sent_at datetime DEFAULT NULL,
  invitation_accepted_at datetime DEFAULT NULL,
  invitation_limit int DEFAULT NULL,
  invited_by_id int DEFAULT NULL,
  invited_by_type varchar(255) DEFAULT NULL,
  reason_for_suspension varchar(255) DEFAULT NULL,
  password_salt varchar(255) DEFAULT NULL,
  confirmation_token varchar(255) DEFAULT NULL,
  confirmed_at datetime DEFAULT NULL,
  confirmation_sent_at datetime DEFAULT NULL,
  unconfirmed_email varchar(255) DEFAULT NULL,
  role varchar(255) DEFAULT 'normal',
  password_changed_at datetime DEFAULT NULL,
  organisation_id int DEFAULT NULL,
  api_user tinyint(1) NOT NULL DEFAULT 0,
  unsuspended_at datetime DEFAULT NULL,
  invitation_created_at datetime DEFAULT NULL,
  otp_secret_key varchar(255) DEFAULT NULL,
  second_factor_attempts_count int DEFAULT 0,
  unlock_token varchar(255) DEFAULT NULL,
  require_2sv tinyint(1) NOT NULL DEFAULT 0,
  reason_for_2sv_exemption varchar(255) DEFAULT NULL,
  expiry_date_for_2sv_exemption date DEFAULT NULL,
  user_research_recruitment_banner_hidden tinyint(1) DEFAULT 0,
  UNIQUE KEY index_users_on_email (email),
  UNIQUE KEY index_users_on_otp_secret_key (otp_secret_key),
  UNIQUE KEY index_users_on_reset_password_token (reset_password_token),
  UNIQUE KEY index_users_on_unlock_token (unlock_token),
  KEY index_users_on_invitation_token (invitation_token),
  KEY index_users_on_invited_by_id (invited_by_id),
  KEY index_users_on_organisation_id (organisation_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_unicode_ci;

CREATE TABLE user_application_permissions (
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id int NOT NULL,
  application_id int NOT NULL,
  supported_permission_id int NOT NULL,
  last_synced_at datetime DEFAULT NULL,
  created_at datetime NOT NULL,
  updated_at datetime NOT NULL,
  UNIQUE KEY index_app_permissions_on_user_and_app_and_supported_perm (user_id, application_id, supported_permission_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;

CREATE TABLE oauth_access_tokens (
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  resource_owner_id int NOT NULL,
  application_id int NOT NULL,
  token varchar(255) NOT NULL,
  refresh_token varchar(255) DEFAULT NULL,
  expires_in int DEFAULT NULL,
  revoked_at datetime DEFAULT NULL,
  created_at datetime NOT NULL,
  scopes varchar(255) DEFAULT NULL,
  UNIQUE KEY index_oauth_access_tokens_on_token (token),
  UNIQUE KEY index_oauth_access_tokens_on_refresh_token (refresh_token),
  KEY index_oauth_access_tokens_on_resource_owner_id (resource_owner_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_unicode_ci;

CREATE TABLE oauth_access_grants (
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  resource_owner_id int NOT NULL,
  application_id int NOT NULL,
  token varchar(255) NOT NULL,
  expires_in int NOT NULL,
  redirect_uri varchar(255) NOT NULL,
  created_at datetime NOT NULL,
  revoked_at datetime DEFAULT NULL,
  scopes varchar(255) NOT NULL DEFAULT '',
  code_challenge varchar(255) DEFAULT NULL,
  code_challenge_method varchar(255) DEFAULT NULL,
  UNIQUE KEY index_oauth_access_grants_on_token (token)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_unicode_ci;

CREATE TABLE old_passwords (
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  encrypted_password varchar(255) NOT NULL,
  password_salt varchar(255) DEFAULT NULL,
  password_archivable_id int NOT NULL,
  password_archivable_type varchar(255) NOT NULL,
  created_at datetime DEFAULT NULL,
  KEY index_password_archivable (password_archivable_type, password_archivable_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;

CREATE TABLE event_logs (
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  uid varchar(255) DEFAULT NULL,
  created_at datetime NOT NULL,
  initiator_id int DEFAULT NULL,
  application_id int DEFAULT NULL,
  trailing_message text,
  event_id int DEFAULT NULL,
  ip_address decimal(38,0) DEFAULT NULL,
  user_agent_id int DEFAULT NULL,
  user_agent_string text,
  user_email_string varchar(255) DEFAULT NULL,
  KEY index_event_logs_on_uid_and_created_at (uid, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
